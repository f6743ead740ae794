#include "actors/io/loop_internals.hpp"

#include <algorithm>
#include <cerrno>
#include <unistd.h>

#include <caf/send.hpp>

namespace corral {

void io_loop::impl::open_stream(process* p, stream_state& s, stream_kind kind, int fd, output_route route) {
  s.owner = p;
  s.kind = kind;
  s.route = std::move(route);
  open_pipe(p, s.pipe, fd, s.open);
  s.pipe.data = &s;
  start_reading(s);
}

void io_loop::impl::start_reading(stream_state& s) {
  s.paused = false;
  uv_read_start(
      reinterpret_cast<uv_stream_t*>(&s.pipe),
      [](uv_handle_t* h, std::size_t, uv_buf_t* buf) {
        auto* st = static_cast<stream_state*>(h->data);
        buf->base = st->owner->loop->read_buffer;
        buf->len = kLoopReadBuffer;
        // Paused streams never read past their credit: nothing is dropped, the rest
        // stays in the pipe and the child blocks.
        if (st->route.when_exhausted == overflow_policy::pause)
          buf->len = static_cast<std::size_t>(std::min<std::uint64_t>(kLoopReadBuffer, st->route.credit));
      },
      [](uv_stream_t* h, ssize_t n, const uv_buf_t* buf) {
        auto* st = static_cast<stream_state*>(h->data);
        st->owner->loop->on_read(*st, n, buf);
      });
}

void io_loop::impl::pause_reading(stream_state& s) {
  uv_read_stop(reinterpret_cast<uv_stream_t*>(&s.pipe));
  s.paused = true;
}

void io_loop::impl::on_read(stream_state& s, ssize_t n, const uv_buf_t* buf) {
  if (n == 0) return;
  if (s.kind == stream_kind::out && s.owner->relay) return relay_child_output(s.owner, n, buf);
  if (n == UV_ENOBUFS && s.route.when_exhausted == overflow_policy::pause) return pause_reading(s);
  if (n < 0) return end_stream(s);  // EOF, or EIO from a pty whose slave is closed
  auto size = static_cast<std::uint64_t>(n);
  auto kept = std::min<std::uint64_t>(size, s.route.credit);
  if (kept > 0 && s.route.sink) {
    s.route.credit -= kept;
    caf::anon_send(s.route.sink, io_chunk{s.owner->id, s.kind, std::string(buf->base, kept)});
  }
  if (kept < size) {
    // Past the credit: either count and discard, so the child never blocks, or stop
    // reading so the child blocks on a full pipe (backpressure).
    s.dropped += size - kept;
  }
  if (s.route.credit == 0 && s.route.when_exhausted == overflow_policy::pause) pause_reading(s);
}

// What the pipe holds right now goes to the reader before its stream is detached: the
// program's last output is in the pipe by the time its exit is known.
void io_loop::impl::drain_now(stream_state& s) {
  uv_os_fd_t fd = -1;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(&s.pipe), &fd) != 0) return;
  for (int i = 0; i < 64 && s.open; ++i) {
    auto n = ::read(fd, s.owner->loop->read_buffer, kLoopReadBuffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;  // EAGAIN: nothing more for now
    uv_buf_t buf = uv_buf_init(s.owner->loop->read_buffer, static_cast<unsigned>(n));
    on_read(s, n == 0 ? static_cast<ssize_t>(UV_EOF) : n, &buf);
  }
}

void io_loop::impl::end_stream(stream_state& s) {
  if (!s.open) return;
  if (s.route.sink) caf::anon_send(s.route.sink, io_eof{s.owner->id, s.kind, s.dropped});
  close_handle(s.owner, reinterpret_cast<uv_handle_t*>(&s.pipe), s.open);
}

void io_loop::impl::do_add_credit(process_id id, stream_kind kind, std::uint64_t bytes) {
  auto* p = find(id);
  if (!p) return;
  auto& s = kind == stream_kind::out ? p->out : p->err;
  s.route.credit += bytes;
  if (s.open && s.paused && s.route.credit > 0) start_reading(s);
}

void io_loop::impl::do_set_overflow(process_id id, stream_kind kind, overflow_policy policy) {
  auto* p = find(id);
  if (!p) return;
  auto& s = kind == stream_kind::out ? p->out : p->err;
  s.route.when_exhausted = policy;
  if (s.open && s.paused && policy == overflow_policy::discard) start_reading(s);
}

} // namespace corral
