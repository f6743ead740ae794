// A session's messages copied between its child and this process's own descriptors, on the
// loop thread (io_loop::relay). With an MCP policy, each message passes the session's
// gateway (actors/mcp/mcp_gate.hpp) here, on the same thread, before it is written. Before it, each message of `corral mcp` crossed four
// threads (the CLI's reader, a CAF worker, the loop, and back through a worker to the CLI's
// writer); here it crosses none. The framing check stays: each direction is cut into
// newline-framed messages by the same decoder the session uses, a message over the limit
// is dropped and reported, and only whole messages are written.
//
// Backpressure, each way: past `window_bytes` queued toward one side, the loop stops
// reading the other (the child blocks on a full stdout, the client on a full stdin pipe),
// and reads again once half of it has been taken.
#include "actors/io/loop_internals.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include <caf/send.hpp>

namespace corral {

namespace {

constexpr auto kReportEvery = std::chrono::milliseconds(100);

} // namespace

void io_loop::relay(process_id id, relay_ends ends) {
  // Duplicates taken now, on the caller's thread, so the numbers it gave are the ones used.
  ends.from_client = ::fcntl(ends.from_client, F_DUPFD_CLOEXEC, 3);
  ends.to_client = ::fcntl(ends.to_client, F_DUPFD_CLOEXEC, 3);
  impl_->post([this, id, e = std::move(ends)]() mutable { impl_->do_relay(id, std::move(e)); });
}

void io_loop::impl::do_relay(process_id id, relay_ends ends) {
  auto* p = find(id);
  if (!p || p->relay || ends.from_client < 0 || ends.to_client < 0 || !p->out.open) {
    if (ends.from_client >= 0) ::close(ends.from_client);
    if (ends.to_client >= 0) ::close(ends.to_client);
    if (ends.notify) caf::anon_send(ends.notify, io_relay_closed{id, relay_end::client_gone});
    return;
  }
  int in_fd = ends.from_client;
  int out_fd = ends.to_client;
  p->relay = std::make_unique<relay_state>(std::move(ends));
  auto& r = *p->relay;
  open_pipe(p, r.client_out, out_fd, r.client_out_open);
  open_pipe(p, r.client_in, in_fd, r.client_in_open);
  read_into_loop_buffer<&impl::relay_client_input>(r.client_in);
  // The child's stdout was opened without credit (nothing read yet): from now on the
  // relay paces it instead.
  p->out.route.credit = UINT64_MAX;
  p->out.route.when_exhausted = overflow_policy::pause;
  if (p->out.paused) start_reading(p->out);
}

void io_loop::impl::relay_report(process* p, bool now) {
  auto& r = *p->relay;
  auto t = std::chrono::steady_clock::now();
  if (!now && t - r.last_report < kReportEvery) return;
  r.last_report = t;
  caf::anon_send(r.ends.notify, io_relay_activity{p->id, r.messages_in, r.messages_out});
}

// The whole messages a read completed; one over the limit is reported (with its direction)
// and left out.
std::vector<decoded_frame> io_loop::impl::relay_frames(process* p, frame_decoder& from, bool toward_child, ssize_t n,
                                                       const uv_buf_t* buf) {
  std::vector<decoded_frame> frames;
  from.feed(std::string_view(buf->base, static_cast<std::size_t>(n)), frames);
  std::erase_if(frames, [&](decoded_frame& f) {
    if (f.error) caf::anon_send(p->relay->ends.notify, io_relay_refused{p->id, toward_child, f.error->message});
    return f.error.has_value();
  });
  return frames;
}

// A write to the client failed: the session hears it once, and the child's messages are
// dropped from now on.
void io_loop::impl::relay_client_gone(process* p) {
  auto& r = *p->relay;
  if (r.client_gone) return;
  r.client_gone = true;
  caf::anon_send(r.ends.notify, io_relay_closed{p->id, relay_end::client_gone});
}

// The child's stdout ended and the client has taken all of it (or is gone): now the
// session hears io_eof.
void io_loop::impl::relay_end_child_output(process* p) {
  auto& r = *p->relay;
  if (r.child_out_ended && (r.toward_client == 0 || r.client_gone)) end_stream(p->out);
}

void io_loop::impl::relay_child_output(process* p, ssize_t n, const uv_buf_t* buf) {
  auto& r = *p->relay;
  if (n < 0) {  // EOF: the session hears of it once the client has every message
    r.child_out_ended = true;
    relay_report(p, true);
    return relay_end_child_output(p);
  }
  for (auto& f : relay_frames(p, r.from_child, false, n, buf)) {
    if (r.client_gone) continue;  // read only so the child does not block: not delivered
    if (r.ends.gate) {
      gate_output out;
      r.ends.gate->from_server(std::move(f.message), std::chrono::steady_clock::now(), out);
      relay_gate_output(p, out);
      continue;
    }
    ++r.messages_out;
    relay_to_client(p, std::move(f.message));
  }
  relay_report(p, false);
  if (r.toward_client > r.ends.window_bytes && !p->out.paused) pause_reading(p->out);
}

void io_loop::impl::relay_to_client(process* p, std::string message) {
  auto& r = *p->relay;
  if (r.client_gone || !r.client_out_open) return;
  // The message and its newline as two buffers (no copy to append it); most messages fit
  // the pipe at once, so nothing is queued or kept.
  static char newline = '\n';
  uv_buf_t bufs[2] = {uv_buf_init(message.data(), static_cast<unsigned>(message.size())), uv_buf_init(&newline, 1)};
  int done = uv_try_write(reinterpret_cast<uv_stream_t*>(&r.client_out), bufs, 2);
  auto total = message.size() + 1;
  if (done == static_cast<int>(total)) return;
  if (done < 0 && done != UV_EAGAIN) return relay_client_gone(p);
  // The rest waits in the loop, the message kept whole with what was already taken skipped.
  auto taken = static_cast<std::size_t>(std::max(done, 0));
  auto* w = new relay_write;
  w->bytes = std::move(message);
  w->loop = this;
  w->id = p->id;
  w->req.data = w;
  w->queued = total - taken;
  r.toward_client += w->queued;
  uv_buf_t rest[2];
  unsigned count = 0;
  if (taken < w->bytes.size())
    rest[count++] = uv_buf_init(w->bytes.data() + taken, static_cast<unsigned>(w->bytes.size() - taken));
  rest[count++] = uv_buf_init(&newline, 1);
  auto written = [](uv_write_t* req, int status) {
    auto* w = static_cast<relay_write*>(req->data);
    auto* loop = w->loop;
    auto* proc = loop->find(w->id);
    auto size = w->queued;
    delete w;
    if (!proc || !proc->relay || loop->stopping) return;  // stopping: every handle is closing
    auto& rs = *proc->relay;
    rs.toward_client -= std::min<std::uint64_t>(rs.toward_client, size);
    if (status < 0) loop->relay_client_gone(proc);
    // A gone client no longer paces the child: its output is read and dropped.
    if (proc->out.open && proc->out.paused && (rs.client_gone || rs.toward_client <= rs.ends.window_bytes / 2))
      loop->start_reading(proc->out);
    loop->relay_resume_client(proc);
    loop->relay_end_child_output(proc);
  };
  if (int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&r.client_out), rest, count, written); rc != 0)
    written(&w->req, rc);
}

void io_loop::impl::relay_client_input(process* p, ssize_t n, const uv_buf_t* buf) {
  auto& r = *p->relay;
  if (n == 0) return;
  if (n < 0) {  // EOF or a read error: the client's input has ended
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&r.client_in));
    close_handle(p, reinterpret_cast<uv_handle_t*>(&r.client_in), r.client_in_open);
    caf::anon_send(r.ends.notify, io_relay_closed{p->id, relay_end::client_eof});
    return;
  }
  for (auto& f : relay_frames(p, r.from_client, true, n, buf)) {
    if (!p->stdin_open || p->stdin_close_requested) continue;  // the child stopped reading
    if (r.ends.gate) {
      gate_output out;
      r.ends.gate->from_client(std::move(f.message), std::chrono::steady_clock::now(), out);
      relay_gate_output(p, out);
      continue;
    }
    relay_to_child(p, std::move(f.message));
  }
  relay_report(p, false);
  // The gateway's answers go toward the client: a client that sends but never reads is
  // paced by them too.
  if ((r.toward_child > r.ends.window_bytes || r.toward_client > r.ends.window_bytes) && r.client_in_open &&
      !r.client_in_paused) {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&r.client_in));
    r.client_in_paused = true;
  }
}

void io_loop::impl::relay_to_child(process* p, std::string message) {
  auto& r = *p->relay;
  if (!p->stdin_open || p->stdin_close_requested) return;
  ++r.messages_in;
  message.push_back('\n');
  r.toward_child += message.size();
  write_to(p, p->stdin_pipe, std::move(message), false);
}

// What the gateway let through, answered or added goes out; its decisions go to the session.
void io_loop::impl::relay_gate_output(process* p, gate_output& out) {
  auto& r = *p->relay;
  for (auto& m : out.to_server) relay_to_child(p, std::move(m));
  for (auto& m : out.to_client) {
    if (r.client_gone) break;
    ++r.messages_out;
    relay_to_client(p, std::move(m));
  }
  if (!out.decisions.empty() || !out.warnings.empty())
    caf::anon_send(r.ends.notify, io_relay_gate{p->id, std::move(out.decisions), std::move(out.warnings)});
}

void io_loop::impl::relay_input_taken(process* p, std::uint64_t bytes) {
  auto& r = *p->relay;
  r.toward_child -= std::min(r.toward_child, bytes);
  relay_resume_client(p);
}

void io_loop::impl::relay_resume_client(process* p) {
  auto& r = *p->relay;
  if (!r.client_in_paused || !r.client_in_open || r.toward_child > r.ends.window_bytes / 2) return;
  if (!r.client_gone && r.toward_client > r.ends.window_bytes / 2) return;
  r.client_in_paused = false;
  read_into_loop_buffer<&impl::relay_client_input>(r.client_in);
}

void io_loop::impl::close_relay(process* p) {
  if (!p->relay) return;
  auto& r = *p->relay;
  close_handle(p, reinterpret_cast<uv_handle_t*>(&r.client_in), r.client_in_open);
  close_handle(p, reinterpret_cast<uv_handle_t*>(&r.client_out), r.client_out_open);
}

} // namespace corral
