// Jail mode of the exec helper. The helper (H) stays in the caller's namespaces: it joins
// the lease's cgroup, clones the jail's init (C) into new user, pid, mount, ipc, uts,
// cgroup and (unless shared) network namespaces, writes C's id maps, and then only relays
// the runtime's SIGTERM and waits. C, pid 1 of the jail, builds the filesystem view and
// runs the target under supervise_target; when C exits the kernel kills every process
// left in the pid namespace.
//
// The written-down order inside C (each step reported with its duration):
//   hostname → filesystem view → loopback → rlimits → close inherited fds
//   → Landlock ruleset prepared
//   → C confines itself (`confine`): drop groups, set uid/gid → drop every capability
//   → parent-death signal again, not dumpable → no_new_privs → landlock_restrict_self
//   → seccomp filter (compiled when corral was built: tiers/exec_helper/seccomp_build/)
//   → (warm: report `armed`, wait for the launch) → clone the target, which inherits all
//   of it and does only: setsid/cwd → execve
// So the program is confined from its first instruction, and C, which stays beside it as
// pid 1, is no stronger than it.
#pragma once

#include <sys/types.h>

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// H's first steps in every jail mode: block the signals it relays and reaps by, join the
// lease's cgroup, drop supplementary groups (step `cgroup`). Non-zero: the exit code.
int begin_helper(const jail_spec& spec);

// warm: fd 3 is still open; C arms the whole jail (everything up to its own confinement),
// reports the step `armed`, and waits there for the launch frame (jail_spec.hpp).
// Hold mode (a workspace's holder): C builds the same jail, reports `armed` and then only
// reaps (hold_workspace); H reports `holding <pid> <start time>` for C.
int run_jailed(const jail_spec& spec, bool warm);

// H's part after the clone: waits for `init`, relaying the runtime's SIGTERM (and killing
// `init` if it has not ended within the spec's grace and a margin). Returns C's exit code.
int relay_until_exit(pid_t init, const jail_spec& spec);

} // namespace corral::helper
