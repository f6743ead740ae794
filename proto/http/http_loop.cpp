#include "proto/http/http_loop.hpp"

#include <csignal>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <vector>

#include <caf/send.hpp>
#include <uv.h>

#include "actors/io/loop_inbox.hpp"
#include "proto/http/http_events.hpp"
#include "proto/http/request_reader.hpp"

namespace corral {

namespace {

constexpr std::size_t kReadBuffer = 64 * 1024;
constexpr int kBacklog = 511;
// After a graceful close's FIN, what the client still sends is read and dropped for this
// long: closing a socket with unread input sends a reset, which can destroy the response
// (a 413) before the client has read it.
constexpr std::uint64_t kLingerMs = 2'000;

// open ──close()/refusal──▶ draining (reads stopped; shutdown queued behind the writes)
// ──FIN sent──▶ lingering (input read and dropped) ──EOF, error or kLingerMs──▶ closing.
// Any state ──hang-up, write error, stop, head timeout──▶ closing (handles closing; the
// actor hears http_closed when both are closed).
enum class conn_phase : std::uint8_t { open, draining, lingering, closing };

struct command {
  enum class kind { write, close, stop } what;
  std::uint64_t id = 0;
  std::string bytes;
};

std::string peer_name(const uv_tcp_t* tcp) {
  sockaddr_storage addr{};
  int len = sizeof addr;
  if (uv_tcp_getpeername(tcp, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "unknown";
  char host[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    uv_ip6_name(a, host, sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(a->sin6_port));
  }
  auto* a = reinterpret_cast<sockaddr_in*>(&addr);
  uv_ip4_name(a, host, sizeof host);
  return std::string(host) + ":" + std::to_string(ntohs(a->sin_port));
}

} // namespace

struct http_loop::impl {
  struct connection {
    impl* owner = nullptr;
    std::uint64_t id = 0;
    caf::actor actor;
    uv_tcp_t tcp{};
    uv_timer_t timer{};  // the head timeout, then the linger bound
    int open_handles = 0;
    conn_phase phase = conn_phase::open;
    std::string reason;
    uv_shutdown_t shutdown_req{};
    request_reader reader;

    connection(impl* o, std::uint64_t i, const http_limits& l)
        : owner(o), id(i), reader(i, l.max_head_bytes, l.max_body_bytes) {}
    uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp); }
  };

  struct write_request {
    uv_write_t req;
    std::string bytes;
    connection* owner;
    bool acknowledged;  // an actor's bytes (http_written), not the loop's own answers
  };

  http_loop* self = nullptr;
  http_limits limits;
  accept_fn accept;
  uv_loop_t loop{};
  uv_async_t wake{};
  std::unique_ptr<uv_tcp_t> listener;
  std::map<std::uint64_t, std::unique_ptr<connection>> connections;
  std::uint64_t next_id = 1;
  bool stopping = false;
  // One read buffer for the loop: libuv hands it to one read callback at a time.
  std::vector<char> buffer = std::vector<char>(kReadBuffer);

  std::mutex stop_mu;  // one stop() at a time
  loop_inbox<command> inbox{&wake};  // write, close and stop from other threads

  void post(command c) { inbox.post(std::move(c)); }

  void drain() {
    auto batch = inbox.take();
    for (auto& c : batch) {
      if (c.what == command::kind::stop) {
        begin_stop();
        continue;
      }
      auto it = connections.find(c.id);
      if (it == connections.end()) continue;  // already closed: its actor hears http_closed
      if (c.what == command::kind::close) begin_close(it->second.get(), "closed by the server after its response");
      else send(it->second.get(), std::move(c.bytes), true);
    }
  }

  void send(connection* c, std::string bytes, bool acknowledged) {
    // After close() or a refusal nothing more belongs on the wire.
    if (c->phase != conn_phase::open || bytes.empty()) return;
    auto* w = new write_request{{}, std::move(bytes), c, acknowledged};
    uv_buf_t buf = uv_buf_init(w->bytes.data(), static_cast<unsigned>(w->bytes.size()));
    int rc = uv_write(&w->req, c->stream(), &buf, 1, [](uv_write_t* req, int status) {
      auto* w = reinterpret_cast<write_request*>(req);
      auto* c = w->owner;
      if (status == 0 && w->acknowledged && c->actor) caf::anon_send(c->actor, http_written{w->bytes.size()});
      // ECANCELED: the handle is closing, and already knows why.
      if (status < 0 && status != UV_ECANCELED) c->owner->finish(c, std::string("writing: ") + uv_strerror(status));
      delete w;
    });
    if (rc < 0) {
      delete w;
      return finish(c, std::string("writing: ") + uv_strerror(rc));
    }
    // A client that never reads must not make the server hold its output without bound.
    if (uv_stream_get_write_queue_size(c->stream()) > limits.max_pending_output)
      finish(c, "the client did not read its response (more than " + std::to_string(limits.max_pending_output) +
                    " bytes pending)");
  }

  // Graceful: the FIN follows what was written, then the input is drained for a moment.
  void begin_close(connection* c, std::string reason) {
    if (c->phase != conn_phase::open) return;
    c->phase = conn_phase::draining;
    c->reason = std::move(reason);
    uv_read_stop(c->stream());
    uv_timer_stop(&c->timer);
    c->shutdown_req.data = c;
    int rc = uv_shutdown(&c->shutdown_req, c->stream(), [](uv_shutdown_t* req, int status) {
      auto* c = static_cast<connection*>(req->data);
      if (c->phase != conn_phase::draining) return;  // closing already (ECANCELED)
      if (status < 0) return c->owner->finish(c, c->reason);
      c->phase = conn_phase::lingering;
      uv_timer_start(&c->timer, [](uv_timer_t* t) {
        auto* c = static_cast<connection*>(t->data);
        c->owner->finish(c, c->reason);
      }, kLingerMs, 0);
      c->owner->start_reading(c);
    });
    if (rc < 0) finish(c, c->reason);
  }

  // At once: both handles close; the actor hears http_closed when they have.
  void finish(connection* c, std::string reason) {
    if (c->phase == conn_phase::closing) return;
    if (c->phase == conn_phase::open) c->reason = std::move(reason);  // else the graceful close's reason stands
    c->phase = conn_phase::closing;
    auto closed = [](uv_handle_t* h) {
      auto* c = static_cast<connection*>(h->data);
      if (--c->open_handles > 0) return;
      auto* owner = c->owner;
      if (c->actor) caf::anon_send(c->actor, http_closed{c->reason});
      owner->connections.erase(c->id);
      owner->self->connections_ = owner->connections.size();
    };
    uv_close(reinterpret_cast<uv_handle_t*>(&c->tcp), closed);
    uv_close(reinterpret_cast<uv_handle_t*>(&c->timer), closed);
  }

  void on_bytes(connection* c, std::string_view bytes) {
    if (c->phase == conn_phase::lingering) return;  // dropped: the response is out
    auto out = c->reader.feed(bytes);
    for (auto& request : out.requests) caf::anon_send(c->actor, std::move(request));
    if (out.continue_expected) send(c, "HTTP/1.1 100 Continue\r\n\r\n", false);
    if (out.refused) {
      http_response answer{out.refused->status, {{"Content-Type", "text/plain; charset=utf-8"}, {"Connection", "close"}},
                           out.refused->message + "\n"};
      send(c, serialize(answer), false);
      return begin_close(c, "refused with " + std::to_string(out.refused->status) + ": " + out.refused->message);
    }
    if (c->phase != conn_phase::open) return;
    if (!c->reader.awaiting_head()) uv_timer_stop(&c->timer);
    else if (!uv_is_active(reinterpret_cast<uv_handle_t*>(&c->timer))) arm_head_timer(c);
  }

  void arm_head_timer(connection* c) {
    uv_timer_start(&c->timer, [](uv_timer_t* t) {
      auto* c = static_cast<connection*>(t->data);
      c->owner->finish(c, "no complete request head within " + std::to_string(c->owner->limits.head_timeout.count()) + " ms");
    }, static_cast<std::uint64_t>(limits.head_timeout.count()), 0);
  }

  void start_reading(connection* c) {
    uv_read_start(
        c->stream(),
        [](uv_handle_t* h, size_t, uv_buf_t* buf) {
          auto* owner = static_cast<connection*>(h->data)->owner;
          *buf = uv_buf_init(owner->buffer.data(), static_cast<unsigned>(owner->buffer.size()));
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
          auto* c = static_cast<connection*>(s->data);
          if (n < 0)
            return c->owner->finish(c, n == UV_EOF ? "the client hung up"
                                                   : std::string("reading: ") + uv_strerror(static_cast<int>(n)));
          if (n > 0) c->owner->on_bytes(c, std::string_view(buf->base, static_cast<std::size_t>(n)));
        });
  }

  void on_connection() {
    auto owned = std::make_unique<connection>(this, next_id++, limits);
    auto* c = owned.get();
    connections[c->id] = std::move(owned);
    self->connections_ = connections.size();
    uv_tcp_init(&loop, &c->tcp);
    uv_timer_init(&loop, &c->timer);
    c->tcp.data = c;
    c->timer.data = c;
    c->open_handles = 2;
    if (uv_accept(reinterpret_cast<uv_stream_t*>(listener.get()), c->stream()) < 0) return finish(c, "accept failed");
    // Accepted and closed at once, not left in the backlog: the client learns now.
    if (connections.size() > limits.max_connections) return finish(c, "too many connections");
    // Responses are written whole or as chunks the actor chose: Nagle would only delay them.
    uv_tcp_nodelay(&c->tcp, 1);
    c->actor = accept(c->id, peer_name(&c->tcp));
    if (!c->actor) return finish(c, "no actor for the connection");
    arm_head_timer(c);
    start_reading(c);
  }

  void begin_stop() {
    if (stopping) return;
    stopping = true;
    if (listener) uv_close(reinterpret_cast<uv_handle_t*>(listener.get()), nullptr);
    std::vector<connection*> all;
    for (auto& [id, c] : connections) all.push_back(c.get());
    for (auto* c : all) finish(c, "the server is stopping");
    inbox.close();
    uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
  }
};

http_loop::http_loop(http_limits limits, accept_fn accept) : impl_(std::make_unique<impl>()) {
  impl_->self = this;
  impl_->limits = limits;
  impl_->accept = std::move(accept);
  uv_loop_init(&impl_->loop);
  impl_->loop.data = impl_.get();
  uv_async_init(&impl_->loop, &impl_->wake, [](uv_async_t* a) { static_cast<impl*>(a->loop->data)->drain(); });
}

http_loop::~http_loop() {
  stop();
  uv_loop_close(&impl_->loop);
}

status http_loop::listen(const std::string& host, std::uint16_t port) {
  if (impl_->listener) return make_failure(failure_kind::internal, "http_loop::listen called twice");
  std::string numeric = host == "localhost" ? "127.0.0.1" : host;
  if (numeric.size() > 2 && numeric.front() == '[' && numeric.back() == ']') numeric = numeric.substr(1, numeric.size() - 2);
  sockaddr_storage addr{};
  if (uv_ip4_addr(numeric.c_str(), port, reinterpret_cast<sockaddr_in*>(&addr)) != 0 &&
      uv_ip6_addr(numeric.c_str(), port, reinterpret_cast<sockaddr_in6*>(&addr)) != 0)
    return make_failure(failure_kind::config_error,
                        "the HTTP listen address '" + host + "' is not a numeric IPv4 or IPv6 address (or localhost)");
  auto tcp = std::make_unique<uv_tcp_t>();
  uv_tcp_init(&impl_->loop, tcp.get());
  int rc = uv_tcp_bind(tcp.get(), reinterpret_cast<const sockaddr*>(&addr), 0);
  // libuv reports some bind errors (EADDRINUSE) only at listen.
  if (rc == 0)
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(tcp.get()), kBacklog, [](uv_stream_t* server, int status) {
      if (status == 0) static_cast<impl*>(server->loop->data)->on_connection();
    });
  if (rc < 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(tcp.release()), [](uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); });
    return make_failure(failure_kind::config_error, "listening for HTTP on " + host + " port " + std::to_string(port) +
                                                        ": " + uv_strerror(rc));
  }
  sockaddr_storage bound{};
  int len = sizeof bound;
  uv_tcp_getsockname(tcp.get(), reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  impl_->listener = std::move(tcp);
  return ok();
}

void http_loop::start() {
  if (thread_.joinable() || stopped_) return;
  thread_ = std::thread([this] {
    // A write to a client that reset raises SIGPIPE in the writing thread, and its default
    // action ends the process. Blocked here, the write fails with EPIPE and the connection
    // closes; other threads of the program keep their own disposition (as in io_loop).
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    uv_run(&impl_->loop, UV_RUN_DEFAULT);
  });
}

void http_loop::stop() {
  std::lock_guard<std::mutex> lock(impl_->stop_mu);
  if (stopped_) return;
  if (thread_.joinable()) {
    impl_->post({command::kind::stop, 0, {}});
    thread_.join();
  } else {
    // Never started: close the handles here, on the only thread that touches them.
    impl_->begin_stop();
  }
  // Runs what is left (close callbacks; everything, if the loop never started) to the end.
  uv_run(&impl_->loop, UV_RUN_DEFAULT);
  stopped_ = true;
}

void http_loop::write(std::uint64_t connection, std::string bytes) {
  impl_->post({command::kind::write, connection, std::move(bytes)});
}

void http_loop::close(std::uint64_t connection) { impl_->post({command::kind::close, connection, {}}); }

} // namespace corral
