// Joining the lease's cgroups: the calling process writes "0" (itself) into each join
// file of the spec (v2 cgroup.procs, v1 tasks), so it and everything it forks are counted,
// limited and killed with the execution.
#pragma once

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// 0, or an errno after reporting which file could not be joined.
int join_cgroups(const jail_spec& spec);

} // namespace corral::helper
