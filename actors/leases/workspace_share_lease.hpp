// A step's lease in a workspace with a holder: a share of the workspace's cgroup lease
// (actors/workspaces/workspace_holder.hpp), speaking the protocol of lease_messages.hpp so
// the execution or session holding it does not care.
//
//   acquire   asks the holder (arming it if need be): the grant is the workspace's cgroup
//             to join and the holder to enter; the workspace's OOM-kill and refused-fork
//             counts are read as the baseline
//   terminate SIGTERM to the step's helper, which relays it to the step's supervisor: that
//             ends the step's whole tree (SIGTERM, the grace, SIGKILL); SIGKILL to the
//             helper's group if it has not ended after the grace and a margin
//   report, finish  the verdict's share of the counters: out_of_memory when the workspace's
//             OOM kills grew while the step ran, pids_limit when refused forks did. Usage is
//             the step's own (its supervisor's rusage), as the cgroup is shared. finish
//             kills nothing: the step's supervisor has ended its tree, or left it running
//             when asked to (leave_running).
#pragma once

#include <chrono>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

namespace corral {

class io_loop;

caf::actor spawn_workspace_share_lease(caf::actor_system& sys, io_loop* io, caf::actor holder,
                                       std::chrono::milliseconds grace);

} // namespace corral
