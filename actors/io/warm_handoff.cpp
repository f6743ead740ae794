#include "actors/io/loop_internals.hpp"

#include <cerrno>

#include <caf/send.hpp>

namespace corral {

void io_loop::impl::do_launch(process_id id, std::string bytes) {
  auto* p = find(id);
  if (!p || !p->spec_open) return;
  if (p->keep_spec_open) {
    p->keep_spec_open = false;
    --armed_waiting;
    update_tracked();
  }
  if (bytes.empty()) return close_handle(p, reinterpret_cast<uv_handle_t*>(&p->spec_pipe), p->spec_open);
  write_to(p, p->spec_pipe, std::move(bytes), true);
}

void io_loop::impl::do_adopt(process_id id, caf::actor owner, output_route out, output_route err) {
  auto* p = find(id);
  if (!p) {
    caf::anon_send(owner, io_spawn_failed{id, ESRCH, "the warm jail is gone"});
    return;
  }
  p->owner = std::move(owner);
  for (auto [s, route] : {std::pair{&p->out, &out}, std::pair{&p->err, &err}}) {
    s->route = std::move(*route);
    s->dropped = 0;  // nothing of the program has been read yet: a helper writes no output
    if (!s->open) caf::anon_send(s->route.sink, io_eof{p->id, s->kind, 0});
    else if (s->paused && s->route.credit > 0) start_reading(*s);
  }
  caf::anon_send(p->owner, io_spawned{p->id, p->pid});
  if (p->reaped) caf::anon_send(p->owner, io_exited{p->id, p->exit_status});
}

} // namespace corral
