// Jail mode of the exec helper. The helper (H) stays in the caller's namespaces: it joins
// the lease's cgroup, clones the jail's init (C) into new user, pid, mount, ipc, uts,
// cgroup and (unless shared) network namespaces, writes C's id maps, and then only relays
// the runtime's SIGTERM and waits. C, pid 1 of the jail, builds the filesystem view and
// runs the target under supervise_target; when C exits the kernel kills every process
// left in the pid namespace.
//
// The written-down order inside C (each step reported with its duration):
//   hostname → filesystem view → loopback → rlimits → close inherited fds
//   → Landlock ruleset prepared → seccomp filter compiled → (warm: report `armed`, wait
//   for the launch) → fork the target, which does:
//   setsid/cwd → drop groups, set uid/gid → drop every capability → no_new_privs
//   → landlock_restrict_self → seccomp_load → execve
#pragma once

#include "tiers/jail_spec.hpp"

namespace corral::helper {

// warm: fd 3 is still open; C arms the whole jail (everything up to the seccomp filter),
// reports the step `armed`, and waits there for the launch frame (jail_spec.hpp).
int run_jailed(const jail_spec& spec, bool warm);

} // namespace corral::helper
