// Finds which cgroup version and controllers this machine offers corral, from the mounts
// (tiers/cgroups/cgroup_mounts.hpp): the start-up half of what the lease's layout resolves.
#pragma once

#include "tiers/kernel_features.hpp"

namespace corral {

void detect_cgroups(kernel_features& features);

} // namespace corral
