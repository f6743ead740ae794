// The one way a child starts: a step run cold, a session's child, a warm jail armed ahead
// and later handed its step. Every launch asks the tier for a plan and gives the I/O loop
// one spawn command for the exec helper; every child gets its process id here, from one
// counter, so no two children (of whatever kind) ever share an id in the loop.
//
// Not an actor: a thread-safe object the runtime owns (it outlives every actor that holds
// its pointer). The spawn's outcome (io_spawned or io_spawn_failed) and every later event
// of the child reach the wiring's owner, as the I/O loop sends them.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "actors/io/io_events.hpp"
#include "actors/io/io_loop.hpp"
#include "actors/launch/launch_mode.hpp"
#include "config/failure.hpp"
#include "config/limits.hpp"
#include "tiers/jail/jail_spec.hpp"
#include "tiers/tier.hpp"

namespace corral {

struct execution_plan;
struct exec_step;

// The single builder of what the tier plans a step from (cold, warm or a session's child).
launch_request launch_request_for(const execution_plan& plan, const exec_step& step, bool controlling_tty);

// Where a child's events, output and input go.
struct child_wiring {
  caf::actor owner;  // io_spawned, io_spawn_failed, io_status, io_exited, io_stdin_closed
  output_route out;
  output_route err;
  bool stdin_pipe = false;     // false: /dev/null
  bool report_writes = false;  // io_written to the owner after each stdin write
  pty_options pty;
  // Allowlist network mode: the egress_proxy that decides for the jail's listeners.
  caf::actor egress;
};

// What the tier's plan holds and what it could not.
struct launched_child {
  process_id id = 0;
  std::string isolation;
  std::vector<std::string> not_enforced;
  std::vector<std::string> masked;  // protected paths the view covers
};

// What a warm jail is armed from: the profile alone, before any request (and a workspace's
// holder: its files and budget).
struct arming {
  std::string work_dir;  // the jail's /work
  std::string home;      // a workspace's second place for work_dir (launch_request::home)
  limits effective;      // the profile's, which its lease holds
  std::string caller_path;
};

struct armed_child {
  process_id id = 0;
  jail_spec armed;  // a step's own plan must ask for exactly this boundary
};

class child_launcher {
public:
  child_launcher(io_loop& io, std::string helper_path);
  child_launcher(const child_launcher&) = delete;
  child_launcher& operator=(const child_launcher&) = delete;

  // launch_mode::run: the tier's plan of `request`, started now.
  expected<launched_child> launch(const tier& boundary, const launch_request& request, const lease_grant& grant,
                                  child_wiring wiring);
  // launch_mode::arm: a jail built from the profile, waiting on its fd 3. Its events go to
  // `owner`, its output is discarded until launch_armed gives it routes.
  expected<armed_child> arm(const tier& boundary, const arming& what, const lease_grant& grant, caf::actor owner);
  // Hands an armed jail its step: the step's own plan, which must ask for the boundary the
  // jail was armed with. The wiring's owner then hears io_spawned as after a launch; only
  // its owner and output routes apply (an armed jail's stdin is a pipe already).
  expected<launched_child> launch_armed(const armed_child& jail, const tier& boundary, const launch_request& request,
                                        const lease_grant& grant, child_wiring wiring);
  // launch_mode::hold: a workspace's holder, the jail planned from `what` (the workspace's
  // files as work_dir, its budget as limits). Its events go to `owner` (status `holding`,
  // then step `armed` once its init holds the workspace); its output is discarded.
  expected<launched_child> hold(const tier& boundary, const arming& what, const lease_grant& grant, caf::actor owner);
  // Ends an armed jail nobody launched: EOF on its fd 3 lets it exit.
  void retire_armed(process_id id);

  // The per-child calls (stdin, credit, resize, signals, release) on a launched child.
  io_loop& io() const { return *io_; }

private:
  spawn_command command_for(launch_mode mode, const jail_spec& spec, child_wiring wiring);

  io_loop* io_;
  const std::string helper_path_;
  std::atomic<process_id> next_id_{1};
};

} // namespace corral
