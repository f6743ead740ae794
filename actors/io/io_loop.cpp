#include "actors/io/loop_internals.hpp"

#include <csignal>
#include <future>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/send.hpp>

namespace corral {

io_loop::impl::impl() {
  uv_loop_init(&loop);
  egress = std::make_unique<egress_relay>(&loop);
  wake.data = this;
  uv_async_init(&loop, &wake, [](uv_async_t* h) { static_cast<impl*>(h->data)->drain(); });
  thread = std::thread([this] { run(); });
}

io_loop::impl::~impl() {
  post([this] {
    stopping = true;
    for (auto& [id, p] : processes) {
      // A runtime that stops kills what it started; the helper's own cleanup handles
      // descendants, and its process group is the last resort.
      if (!p->reaped && p->pid > 0) ::kill(-p->pid, SIGKILL);
    }
    uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
    uv_stop(&loop);
  });
  thread.join();
  // Reap what the stop killed so no zombie outlives the runtime, then free the rest.
  for (auto& [id, p] : processes) {
    if (!p->reaped && p->pid > 0) ::waitpid(p->pid, nullptr, 0);
    close_fd(p->pidfd);
    close_fd(p->pty_master);
    delete p;
  }
  uv_loop_close(&loop);
}

void io_loop::impl::run() {
  // A write to a pipe whose reader is gone raises SIGPIPE in the writing thread; blocked
  // here, the write just fails with EPIPE. Other threads of the embedding program keep
  // their own disposition.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  // Close what stopping left open, so uv_loop_close succeeds.
  uv_walk(&loop, [](uv_handle_t* h, void*) {
    if (!uv_is_closing(h)) uv_close(h, nullptr);
  }, nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
}

void io_loop::impl::post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> guard(mutex);
    queue.push_back(std::move(fn));
  }
  uv_async_send(&wake);
}

void io_loop::impl::drain() {
  std::deque<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> guard(mutex);
    batch.swap(queue);
  }
  for (auto& fn : batch) fn();
}

io_loop::impl::process* io_loop::impl::find(process_id id) {
  auto it = processes.find(id);
  return it == processes.end() ? nullptr : it->second;
}

void io_loop::impl::open_pipe(process* p, uv_pipe_t& pipe, int fd, bool& open_flag, int ipc) {
  uv_pipe_init(&loop, &pipe, ipc);
  pipe.data = p;
  uv_pipe_open(&pipe, fd);
  open_flag = true;
  p->open_handles++;
}

void io_loop::impl::close_handle(process* p, uv_handle_t* h, bool& open_flag) {
  if (!open_flag) return;
  open_flag = false;
  h->data = p;  // stream pipes carry their stream_state until now
  uv_close(h, [](uv_handle_t* handle) {
    auto* proc = static_cast<process*>(handle->data);
    proc->open_handles--;
    proc->loop->maybe_forget(proc);
  });
}

void io_loop::impl::maybe_forget(process* p) {
  if (!p->released || !p->reaped || p->open_handles > 0) return;
  close_fd(p->pidfd);
  close_fd(p->pty_master);
  if (p->keep_spec_open) --armed_waiting;
  processes.erase(p->id);
  update_tracked();
  delete p;
}

void io_loop::impl::do_signal(process_id id, int sig, bool whole_group) {
  auto* p = find(id);
  if (!p || p->reaped) return;  // a reaped pid may already belong to someone else
  ::kill(whole_group ? -p->pid : p->pid, sig);
}

void io_loop::impl::do_resize(process_id id, std::uint16_t rows, std::uint16_t cols) {
  auto* p = find(id);
  if (!p || p->pty_master < 0) return;
  winsize ws{};
  ws.ws_row = rows;
  ws.ws_col = cols;
  ::ioctl(p->pty_master, TIOCSWINSZ, &ws);
}

void io_loop::impl::do_release(process_id id) {
  auto* p = find(id);
  if (!p || p->detached) return;
  p->released = true;
  egress->close_process(p->id);
  close_relay(p);
  for (auto* s : {&p->out, &p->err}) end_stream(*s);
  close_handle(p, reinterpret_cast<uv_handle_t*>(&p->status_pipe), p->status_open);
  close_handle(p, reinterpret_cast<uv_handle_t*>(&p->stdin_pipe), p->stdin_open);
  maybe_forget(p);
}

void io_loop::impl::do_detach_output(process_id id) {
  auto* p = find(id);
  if (!p || p->detached) return;
  p->released = true;
  p->detached = true;
  egress->close_process(p->id);
  close_relay(p);
  for (auto* s : {&p->out, &p->err}) {
    if (!s->open) continue;
    drain_now(*s);
    if (!s->open) continue;  // the drain met EOF
    caf::anon_send(s->route.sink, io_eof{p->id, s->kind, s->dropped});
    s->route = output_route{caf::actor{}, 0, overflow_policy::discard};
    if (s->paused) start_reading(*s);
  }
  close_handle(p, reinterpret_cast<uv_handle_t*>(&p->status_pipe), p->status_open);
  close_handle(p, reinterpret_cast<uv_handle_t*>(&p->stdin_pipe), p->stdin_open);
  maybe_forget(p);
}

io_loop::io_loop() : impl_(std::make_unique<impl>()) {}
io_loop::~io_loop() = default;

void io_loop::spawn(spawn_command cmd) {
  impl_->post([this, c = std::move(cmd)]() mutable { impl_->do_spawn(std::move(c)); });
}
void io_loop::write_stdin(process_id id, std::string bytes) {
  impl_->post([this, id, b = std::move(bytes)]() mutable { impl_->do_write_stdin(id, std::move(b)); });
}
void io_loop::close_stdin(process_id id) {
  impl_->post([this, id] { impl_->do_close_stdin(id); });
}
void io_loop::launch(process_id id, std::string bytes) {
  impl_->post([this, id, b = std::move(bytes)]() mutable { impl_->do_launch(id, std::move(b)); });
}
void io_loop::adopt(process_id id, caf::actor owner, output_route out, output_route err) {
  impl_->post([this, id, o = std::move(owner), out = std::move(out), err = std::move(err)]() mutable {
    impl_->do_adopt(id, std::move(o), std::move(out), std::move(err));
  });
}
void io_loop::signal(process_id id, int sig, bool whole_group) {
  impl_->post([this, id, sig, whole_group] { impl_->do_signal(id, sig, whole_group); });
}
void io_loop::add_credit(process_id id, stream_kind stream, std::uint64_t bytes) {
  impl_->post([this, id, stream, bytes] { impl_->do_add_credit(id, stream, bytes); });
}
void io_loop::set_overflow(process_id id, stream_kind stream, overflow_policy policy) {
  impl_->post([this, id, stream, policy] { impl_->do_set_overflow(id, stream, policy); });
}
void io_loop::resize(process_id id, std::uint16_t rows, std::uint16_t cols) {
  impl_->post([this, id, rows, cols] { impl_->do_resize(id, rows, cols); });
}
void io_loop::release(process_id id) {
  impl_->post([this, id] { impl_->do_release(id); });
}
void io_loop::detach_output(process_id id) {
  impl_->post([this, id] { impl_->do_detach_output(id); });
}
void io_loop::keep_spare_helper(std::string program, bool replace) {
  impl_->post([this, p = std::move(program), replace]() mutable { impl_->do_keep_spare(std::move(p), replace); });
}
std::size_t io_loop::tracked() const { return impl_->tracked_count; }
void io_loop::egress_answer(corral::egress_answer answer) {
  impl_->post([this, a = std::move(answer)] { impl_->egress->on_answer(a); });
}
std::size_t io_loop::egress_connections(process_id id) const {
  std::promise<std::size_t> count;
  auto f = count.get_future();
  impl_->post([this, id, &count] { count.set_value(impl_->egress->open_connections(id)); });
  return f.get();
}


} // namespace corral
