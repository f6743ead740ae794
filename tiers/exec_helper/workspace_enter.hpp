// Enter mode of the exec helper: a step in a workspace. The helper (H) joins the lease's
// cgroup, becomes non-dumpable, takes a pidfd on the workspace's holder init (refusing a
// pid whose start time is not the one its holder reported), enters the holder's user,
// mount, pid, ipc, uts, cgroup and (unless shared) network namespaces in one setns, and
// forks. The child (C', a process of the workspace's pid namespace but outside every
// Landlock domain of the workspace's processes) applies rlimits, closes inherited fds,
// confines itself exactly as a jail's init does (confinement.hpp), and supervises the
// program. H only relays the runtime's SIGTERM, as in jail mode.
//
// No filesystem view is built: the holder's is the workspace's, shared by every step, as
// are /tmp, loopback and the processes. With `leave_running`, C' reports `exited` when the
// program exits and leaves its descendants alone; they reparent to the holder's init.
#pragma once

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

int run_entered(const jail_spec& spec);

} // namespace corral::helper
