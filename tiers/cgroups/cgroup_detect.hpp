// Finds which cgroup version and controllers this machine offers corral, from the mounts
// (tiers/cgroups/cgroup_mounts.hpp): the start-up half of what the lease's layout resolves.
#pragma once

#include <string>
#include <vector>

#include "tiers/cgroups/cgroup_mounts.hpp"
#include "tiers/kernel_features.hpp"

namespace corral {

// Reads this mount namespace's mounts and /proc/self/cgroup.
void detect_cgroups(kernel_features& features);
// The same from given mounts and /proc/self/cgroup text (the tests' fake trees).
void detect_cgroups(kernel_features& features, const std::vector<cgroup_mount>& mounts,
                    const std::string& proc_self_cgroup);

} // namespace corral
