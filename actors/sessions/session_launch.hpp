// Starting a session's child: what the spawner does for an execution step (the tier's
// launch plan, then the exec helper through the I/O loop), with the stream routes and the
// pty a session needs, and in allowlist mode the session's egress proxy (actors/sessions/session_egress.hpp).
// The spawn's outcome reaches `owner` as io_spawned/io_spawn_failed.
#pragma once

#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "actors/leases/lease_request.hpp"
#include "actors/execution.hpp"
#include "actors/io/io_loop.hpp"
#include "tiers/jail/jail_spec.hpp"

namespace corral {

struct session_env {
  io_loop* io = nullptr;
  std::string helper_path;
  lease_factory make_lease;
};

struct session_launch {
  std::string isolation;
  std::vector<std::string> not_enforced;
};

struct session_streams {
  output_route out;
  output_route err;
  pty_options pty;
};

inline expected<session_launch> launch_session_child(const session_env& env, const execution_plan& plan,
                                                     const lease_grant& grant, process_id id,
                                                     caf::actor owner, session_streams streams,
                                                     caf::actor egress) {
  const auto& step = plan.steps.front();
  launch_request req;
  req.argv = step.argv;
  req.env = step.env;
  req.scratch_dir = plan.work_dir;
  req.effective = plan.effective;
  req.caller_path = plan.caller_path;
  req.controlling_tty = streams.pty.enabled;
  auto launch = plan.boundary->plan(req, grant);
  if (!launch) return launch.error();
  spawn_command cmd;
  cmd.id = id;
  cmd.program = env.helper_path;
  cmd.argv = {"corral-exec"};
  cmd.stdin_pipe = true;
  cmd.spec_bytes = serialize(launch->spec);
  cmd.owner = std::move(owner);
  cmd.out = std::move(streams.out);
  cmd.err = std::move(streams.err);
  cmd.report_writes = true;
  cmd.pty = streams.pty;
  cmd.egress = std::move(egress);  // allowlist mode: decides for the jail's proxy listeners
  env.io->spawn(std::move(cmd));
  return session_launch{launch->isolation, launch->not_enforced};
}

} // namespace corral
