// The host tier's lease: no cgroup, so "kill everything" is the exec helper's job (it is
// the execution's subreaper). terminate asks the helper with SIGTERM; if the helper itself
// has not exited well after the grace, its whole process group gets SIGKILL as the last
// resort. Speaks the protocol of lease_messages.hpp.
#pragma once

#include <chrono>

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>

namespace corral {

class io_loop;

caf::behavior process_group_lease(caf::event_based_actor* self, io_loop* io,
                                  std::chrono::milliseconds grace);

} // namespace corral
