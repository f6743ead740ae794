// The contained tier's helper (jail_mode::contained): no namespace, mount or cgroup. The
// helper stays unconfined as the target's parent and child subreaper (target_supervisor),
// so every descendant, daemonized or not, is killed at the end; the target confines
// itself between its clone and its exec:
//   rlimits (RLIMIT_NPROC counted above what its uid already runs: jail_spec's
//   process_budget) -> the unprivileged uid when the runtime is root -> no capabilities ->
//   no_new_privs -> parent-death SIGKILL -> the Landlock domain on host paths -> inherited
//   fds closed -> the contained seccomp filter (whose listener goes back to the helper's
//   connect broker in allow-list mode) -> execve.
#pragma once

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// Returns the helper's exit code after reporting `exited` (or `failed`).
int run_contained(const jail_spec& spec);

} // namespace corral::helper
