// The spare: one exec helper spawned ahead of any launch, idle on its fd 3 (it reads its
// spec until EOF), so a cold launch's path is a write to a running helper rather than the
// helper's posix_spawn, whose exec costs about a millisecond here and blocks this thread
// meanwhile (vfork). It holds nothing of any request: no spec, no cgroup, no namespace; it
// runs as the helper always does, with an empty environment, fds 0-4 only, in its own
// process group. Taken, it is that launch's helper exactly as if spawned for it.
#include "actors/io/loop_internals.hpp"

#include <limits>
#include <utility>

namespace corral {

namespace {

// Spares are named from the middle of the id range: the launcher's ids count up from 1.
constexpr process_id kFirstSpareId = std::numeric_limits<process_id>::max() / 2;

} // namespace

void io_loop::impl::do_keep_spare(std::string program, bool replace) {
  spare_program = std::move(program);
  keep_spare = true;
  replace_spare = replace;
  spawn_spare();
}

void io_loop::impl::spawn_spare() {
  if (!keep_spare || spare || stopping) return;
  spawn_command cmd;
  cmd.id = kFirstSpareId + next_spare_id++;
  cmd.program = spare_program;
  cmd.argv = {"corral-exec"};
  cmd.stdin_pipe = true;      // closed when taken by a launch without stdin
  cmd.keep_spec_open = true;  // nothing is written to fd 3 until a launch takes it
  // No owner and no sink until taken: a helper writes nothing before its spec.
  cmd.out = {caf::actor{}, 0, overflow_policy::discard};
  cmd.err = {caf::actor{}, 0, overflow_policy::discard};
  auto id = cmd.id;
  do_spawn_helper(std::move(cmd));
  // None when the spawn failed: the next launch spawns its own, and says why if it fails.
  spare = find(id);
}

bool io_loop::impl::spare_fits(const spawn_command& cmd) const {
  // Only a launch that would spawn the spare's very command: a pty, a kept spec (a warm
  // jail) or another program is spawned as asked.
  return keep_spare && cmd.program == spare_program && cmd.argv.size() == 1 && cmd.argv.front() == "corral-exec" &&
         cmd.envp.empty() && !cmd.pty.enabled && !cmd.keep_spec_open;
}

void io_loop::impl::after_fitting_launch() {
  if (!replace_spare) keep_spare = false;  // once: the first launch only
  // Queued, not now: the spawn blocks this thread for its exec, and the launch's spec
  // write completes (its EOF reaches the helper) only at the loop's next turn, which runs
  // write callbacks before the queue.
  post([this] { spawn_spare(); });
}

bool io_loop::impl::take_spare(spawn_command& cmd) {
  if (!spare || spare->reaped) return false;
  process* p = std::exchange(spare, nullptr);
  processes.erase(p->id);
  p->id = cmd.id;
  processes[p->id] = p;
  p->report_writes = cmd.report_writes;
  if (cmd.egress) egress->set_decider(p->id, cmd.egress);
  // EOF at once, as /dev/null would give: the launch has no stdin.
  if (!cmd.stdin_pipe) close_handle(p, reinterpret_cast<uv_handle_t*>(&p->stdin_pipe), p->stdin_open);
  // Then as a warm jail is handed its step: adopted by the launch's owner and routes
  // (io_spawned), and its spec written and fd 3 closed.
  do_adopt(p->id, std::move(cmd.owner), std::move(cmd.out), std::move(cmd.err));
  do_launch(p->id, std::move(cmd.spec_bytes));
  return true;
}

void io_loop::impl::spare_exited(process* p) {
  // Killed or crashed while idle: forgotten, not replaced at once (a helper that cannot
  // start would otherwise be respawned in a loop); the next launch spawns its own, and the
  // next spare after it. Retired as an unlaunched warm jail is: fd 3 closed, released.
  spare = nullptr;
  do_launch(p->id, "");
  do_release(p->id);
}

} // namespace corral
