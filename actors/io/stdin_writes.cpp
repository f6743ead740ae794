#include "actors/io/loop_internals.hpp"

#include <caf/send.hpp>

namespace corral {

void io_loop::impl::write_to(process* p, uv_pipe_t& pipe, std::string bytes, bool is_spec) {
  auto* req = new write_req;
  req->bytes = std::move(bytes);
  req->proc = p;
  req->is_spec = is_spec;
  req->req.data = req;
  uv_buf_t buf = uv_buf_init(req->bytes.data(), static_cast<unsigned>(req->bytes.size()));
  if (!is_spec) p->stdin_pending++;
  int rc = uv_write(&req->req, reinterpret_cast<uv_stream_t*>(&pipe), &buf, 1,
                    [](uv_write_t* w, int status) {
                      auto* r = static_cast<write_req*>(w->data);
                      r->proc->loop->on_written(r, status);
                    });
  if (rc != 0) on_written(req, rc);
}

void io_loop::impl::on_written(write_req* req, int status) {
  process* p = req->proc;
  bool is_spec = req->is_spec;
  auto written = req->bytes.size();
  delete req;
  if (is_spec) {
    // EOF on fd 3 tells the helper the spec is complete (a warm jail's: that its launch is).
    if (!p->keep_spec_open || status < 0)
      close_handle(p, reinterpret_cast<uv_handle_t*>(&p->spec_pipe), p->spec_open);
    return;
  }
  p->stdin_pending--;
  if (p->relay) relay_input_taken(p, written);
  if (status < 0 && p->stdin_open) {
    caf::anon_send(p->owner, io_stdin_closed{p->id, -status});
    close_handle(p, reinterpret_cast<uv_handle_t*>(&p->stdin_pipe), p->stdin_open);
    return;
  }
  // A relay paces its own input: the session sent none of it and needs no count.
  if (p->report_writes && status >= 0 && !p->relay) caf::anon_send(p->owner, io_written{p->id, written});
  finish_stdin_if_done(p);
}

void io_loop::impl::finish_stdin_if_done(process* p) {
  if (p->stdin_open && p->stdin_close_requested && p->stdin_pending == 0) {
    caf::anon_send(p->owner, io_stdin_closed{p->id, 0});
    close_handle(p, reinterpret_cast<uv_handle_t*>(&p->stdin_pipe), p->stdin_open);
  }
}

void io_loop::impl::do_write_stdin(process_id id, std::string bytes) {
  auto* p = find(id);
  if (!p || !p->stdin_open || p->stdin_close_requested) return;
  write_to(p, p->stdin_pipe, std::move(bytes), false);
}

void io_loop::impl::do_close_stdin(process_id id) {
  auto* p = find(id);
  if (!p) return;
  p->stdin_close_requested = true;
  finish_stdin_if_done(p);
}

} // namespace corral
