#include "actors/io/loop_internals.hpp"

#include <cerrno>
#include <unistd.h>

#include <caf/send.hpp>

#include "tiers/jail/status_line.hpp"

namespace corral {

void io_loop::impl::open_status(process* p, int fd) {
  open_pipe(p, p->status_pipe, fd, p->status_open, 1);
  read_into_loop_buffer<&impl::on_status>(p->status_pipe);
}

void io_loop::impl::on_status(process* p, ssize_t n, const uv_buf_t* buf) {
  if (n == 0) return;
  if (n < 0) {
    close_handle(p, reinterpret_cast<uv_handle_t*>(&p->status_pipe), p->status_open);
    return;
  }
  take_egress_listeners(p);
  p->status_buffer.append(buf->base, static_cast<std::size_t>(n));
  // A helper writes short lines; a runaway one must not grow this buffer without bound.
  if (p->status_buffer.size() > 1 << 20) p->status_buffer.clear();
  for (auto nl = p->status_buffer.find('\n'); nl != std::string::npos;
       nl = p->status_buffer.find('\n')) {
    auto line = p->status_buffer.substr(0, nl);
    p->status_buffer.erase(0, nl + 1);
    if (auto parsed = parse_status_line(line)) caf::anon_send(p->owner, io_status{p->id, *parsed});
  }
}

// What the helper wrote before it exited is in the pipe now: read it before io_exited is
// sent, so its owner never sees the exit of a start whose failure it has not heard yet.
void io_loop::impl::read_status_now(process* p) {
  if (!p->status_open) return;
  uv_os_fd_t fd = -1;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(&p->status_pipe), &fd) != 0) return;
  for (;;) {
    ssize_t n = ::read(fd, read_buffer, kLoopReadBuffer);  // libuv made it non-blocking
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    uv_buf_t buf = uv_buf_init(read_buffer, static_cast<unsigned>(n));
    on_status(p, n, &buf);
  }
}

// The jail's egress listeners ride with the "listeners N" line: the HTTP proxy's first,
// then the SOCKS5 proxy's (tiers/jail/jail_spec.hpp, egress_ports).
void io_loop::impl::take_egress_listeners(process* p) {
  while (uv_pipe_pending_count(&p->status_pipe) > 0) {
    auto kind = p->listeners_received++ == 0 ? listener_kind::http : listener_kind::socks5;
    if (uv_pipe_pending_type(&p->status_pipe) != UV_TCP || p->listeners_received > 2) {
      // Not ours to serve: accept into a throwaway handle just to close the descriptor.
      auto* h = egress->new_listener(p->id, kind);
      uv_accept(reinterpret_cast<uv_stream_t*>(&p->status_pipe), reinterpret_cast<uv_stream_t*>(h));
      egress->drop_listener(h);
      continue;
    }
    auto* h = egress->new_listener(p->id, kind);
    if (uv_accept(reinterpret_cast<uv_stream_t*>(&p->status_pipe), reinterpret_cast<uv_stream_t*>(h)) == 0)
      egress->start_listener(h);
    else
      egress->drop_listener(h);
  }
}

} // namespace corral
