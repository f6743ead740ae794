// Moving bytes for a proxied connection: each read lands in a pooled block that the write
// to the other side takes over (no copy, no allocation per chunk); a count of what is
// queued per direction (blocks count whole, so memory stays bounded) stops reading past the
// high-water mark, so a slow side holds back a fast one; half-close on EOF, and one way to
// close everything.
#include <chrono>
#include <cstring>

#include "actors/egress/egress_connection.hpp"

namespace corral {

namespace {

using conn = egress_relay::connection;

constexpr std::chrono::milliseconds kDrainBound{2000};

struct write_req {
  uv_write_t req{};
  std::string bytes;             // the proxy's own bytes (answers, heads, held inbox)
  std::unique_ptr<char[]> block; // or a relayed read's block, returned to the pool
  std::size_t charged = 0;       // what it counts against the high-water mark
  conn* c = nullptr;
  bool to_client = false;
  bool close_after = false;
};

uv_stream_t* stream(uv_tcp_t& t) { return reinterpret_cast<uv_stream_t*>(&t); }

void alloc(uv_handle_t* h, std::size_t, uv_buf_t* buf) {
  auto* c = static_cast<conn*>(h->data);
  buf->base = c->relay->take_block().release();
  buf->len = egress_relay::kReadBuffer;
}

// Every alloc is paired with one read callback: the block is owned again from here on.
std::unique_ptr<char[]> own(const uv_buf_t* buf) { return std::unique_ptr<char[]>(buf->base); }

void queue_write(conn* c, write_req* r, bool to_client, uv_buf_t buf);

// A relayed read: written at once if the other side takes it (the block goes straight back
// to the pool, nothing is queued, so reading never pauses while both sides keep up);
// what it does not take goes to the other side's queue in the block as it is.
void pass_block(conn* c, bool to_client, std::unique_ptr<char[]> block, std::size_t n) {
  auto* s = stream(to_client ? c->client : c->upstream);
  uv_buf_t now = uv_buf_init(block.get(), static_cast<unsigned>(n));
  int done = uv_try_write(s, &now, 1);  // UV_EAGAIN while earlier bytes are still queued
  if (done < 0 && done != UV_EAGAIN) {
    c->relay->give_back(std::move(block));
    return close_connection(c, std::string("write: ") + uv_strerror(done));
  }
  std::size_t offset = done > 0 ? static_cast<std::size_t>(done) : 0;
  if (offset == n) return c->relay->give_back(std::move(block));
  auto* r = new write_req;
  r->block = std::move(block);
  r->charged = egress_relay::kReadBuffer;
  queue_write(c, r, to_client, uv_buf_init(r->block.get() + offset, static_cast<unsigned>(n - offset)));
}

void on_write(uv_write_t* w, int status) {
  auto* r = static_cast<write_req*>(w->data);
  conn* c = r->c;
  bool to_client = r->to_client, close_after = r->close_after;
  (to_client ? c->queued_to_client : c->queued_to_upstream) -= r->charged;
  c->relay->give_back(std::move(r->block));
  delete r;
  if (c->phase == connection_phase::closing) return;
  if (status < 0) return close_connection(c, std::string("write: ") + uv_strerror(status));
  if (close_after) return drain(c);
  // Below the mark again: the side that was held back may read on.
  auto high = c->relay->limits().high_water;
  if (c->phase == connection_phase::relaying) {
    if (!to_client && c->client_paused && c->queued_to_upstream < high) read_client(c, true);
    if (to_client && c->upstream_paused && c->queued_to_client < high) read_upstream(c, true);
  }
}

void on_client_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
  auto* c = static_cast<conn*>(s->data);
  auto block = own(buf);
  // Not relayed (the inbox copies what it keeps): back to the pool when this returns.
  struct return_unused {
    conn* c;
    std::unique_ptr<char[]>& b;
    ~return_unused() { c->relay->give_back(std::move(b)); }
  } guard{c, block};
  if (n == 0 || c->phase == connection_phase::closing) return;
  if (n < 0) {
    if (n != UV_EOF) return close_connection(c, std::string("program side: ") + uv_strerror(static_cast<int>(n)));
    if (c->phase != connection_phase::relaying) return c->relay->on_client_eof(c);
    return on_peer_eof(c, true);
  }
  if (c->phase == connection_phase::draining) return;
  touch(c);
  if (c->phase == connection_phase::relaying) {
    c->up += static_cast<std::uint64_t>(n);
    pass_block(c, false, std::move(block), static_cast<std::size_t>(n));
    if (c->queued_to_upstream >= c->relay->limits().high_water) read_client(c, false);
    return;
  }
  c->inbox.append(buf->base, static_cast<std::size_t>(n));
  c->relay->on_client_bytes(c);
}

void on_upstream_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
  auto* c = static_cast<conn*>(s->data);
  auto block = own(buf);
  if (n <= 0 || c->phase == connection_phase::closing) c->relay->give_back(std::move(block));
  if (n == 0 || c->phase == connection_phase::closing) return;
  if (n < 0) {
    if (n != UV_EOF) return close_connection(c, std::string("destination side: ") + uv_strerror(static_cast<int>(n)));
    return on_peer_eof(c, false);
  }
  touch(c);
  c->down += static_cast<std::uint64_t>(n);
  pass_block(c, true, std::move(block), static_cast<std::size_t>(n));
  if (c->queued_to_client >= c->relay->limits().high_water) read_upstream(c, false);
}

void on_closed(uv_handle_t* h) {
  auto* c = static_cast<conn*>(h->data);
  if (--c->open_handles == 0) c->relay->forget(c);
}

void shutdown_side(conn* c, bool client_side) {
  auto* req = new uv_shutdown_t;
  req->data = c;
  int rc = uv_shutdown(req, stream(client_side ? c->client : c->upstream), [](uv_shutdown_t* r, int) { delete r; });
  if (rc < 0) delete req;
}

} // namespace

void drain(conn* c) {
  c->phase = connection_phase::draining;
  shutdown_side(c, true);
  read_client(c, true);
  touch(c);
}

void send_bytes(conn* c, bool to_client, std::string bytes, bool close_after) {
  if (bytes.empty() && !close_after) return;
  auto* r = new write_req;
  r->bytes = std::move(bytes);
  r->charged = r->bytes.size();
  r->close_after = close_after;
  queue_write(c, r, to_client, uv_buf_init(r->bytes.data(), static_cast<unsigned>(r->bytes.size())));
}

namespace {

void queue_write(conn* c, write_req* r, bool to_client, uv_buf_t buf) {
  r->c = c;
  r->to_client = to_client;
  r->req.data = r;
  (to_client ? c->queued_to_client : c->queued_to_upstream) += r->charged;
  int rc = uv_write(&r->req, stream(to_client ? c->client : c->upstream), &buf, 1, on_write);
  if (rc < 0) {
    (to_client ? c->queued_to_client : c->queued_to_upstream) -= r->charged;
    c->relay->give_back(std::move(r->block));
    delete r;
    close_connection(c, std::string("write: ") + uv_strerror(rc));
  }
}

} // namespace

void read_client(conn* c, bool on) {
  c->client_paused = !on;
  if (on && !c->client_eof) uv_read_start(stream(c->client), alloc, on_client_read);
  else uv_read_stop(stream(c->client));
}

void read_upstream(conn* c, bool on) {
  if (!c->upstream_live) return;
  c->upstream_paused = !on;
  if (on && !c->upstream_eof) uv_read_start(stream(c->upstream), alloc, on_upstream_read);
  else uv_read_stop(stream(c->upstream));
}

void on_peer_eof(conn* c, bool from_client) {
  (from_client ? c->client_eof : c->upstream_eof) = true;
  if (c->client_eof && c->upstream_eof) return close_connection(c, "");
  // Half-close: the other side learns of the end once what is queued for it is written.
  uv_read_stop(stream(from_client ? c->client : c->upstream));
  shutdown_side(c, !from_client);
}

namespace {

// Connected to the destination: relaying, or a tunnel waiting for the program's first bytes,
// which may be carrying the destination's (a server that speaks first). Such a connection
// has the relay's idle bound, not the request head's.
bool connected(const conn* c) {
  return c->phase == connection_phase::relaying || c->phase == connection_phase::hello;
}

} // namespace

void touch(conn* c) {
  auto bound = connected(c) ? c->idle_timeout
               : c->phase == connection_phase::draining ? kDrainBound
                                                         : c->relay->limits().head_timeout;
  uv_timer_start(&c->timer, [](uv_timer_t* t) {
    auto* cc = static_cast<conn*>(t->data);
    close_connection(cc, connected(cc) ? "idle timeout"
                         : cc->phase == connection_phase::draining ? cc->failure
                                                                   : "no complete request in time");
  }, static_cast<std::uint64_t>(bound.count()), 0);
}

void close_connection(conn* c, std::string failure) {
  if (c->phase == connection_phase::closing) return;
  c->phase = connection_phase::closing;
  if (!failure.empty() && c->failure.empty()) c->failure = std::move(failure);
  c->relay->report_closed(c);
  uv_timer_stop(&c->timer);
  uv_close(reinterpret_cast<uv_handle_t*>(&c->timer), on_closed);
  uv_close(reinterpret_cast<uv_handle_t*>(&c->client), on_closed);
  if (c->upstream_live) {
    c->upstream_live = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&c->upstream), on_closed);
  }
}

} // namespace corral
