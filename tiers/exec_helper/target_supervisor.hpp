// Runs the target as the helper's child and stays until it and every descendant are gone.
//
// The helper is a child subreaper, so processes that leave the target's session (setsid,
// double fork, `nohup … &`) are reparented to it rather than to init, and die with the
// execution: after the target exits, and when the runtime asks the helper to terminate
// (SIGTERM), everything left gets SIGTERM, then SIGKILL after the spec's grace.
#pragma once

#include <functional>

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// Runs in the forked child right before execve. Returns 0, or an errno after reporting
// which step failed (the child then exits 127 without exec).
using pre_exec_hook = std::function<int()>;

// The supervising process's own stdio goes to /dev/null once the target has it, so the
// output pipes reach EOF when the target's tree closes them, not when the helper (or a
// jail's pid namespace) is torn down after it; cleanup commands then write nowhere.
void release_stdio();

class connect_broker;

// How the target ended, for the cleanup that only a killed engine needs.
struct target_ending {
  // It exited on its own with a status below 125 while running: neither killed, nor asked
  // to end, nor an engine's own failure (125 and up).
  bool by_itself = false;
};

// Returns the helper's own exit code. Writes `started` and, at the very end, `exited`.
// With a broker (the contained tier's egress allow-list), its notifications are answered
// while the target runs. `ending`, when given, says how the target ended.
int supervise_target(const jail_spec& spec, const pre_exec_hook& before_exec, connect_broker* broker = nullptr,
                     target_ending* ending = nullptr);

} // namespace corral::helper
