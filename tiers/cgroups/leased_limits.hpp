// What a tier whose executions run inside a cgroup lease can promise on this kernel: the
// landlock jail and the gvisor sandbox hold the same limits the same way, so both ask here.
#pragma once

#include <string>
#include <vector>

#include "config/limits.hpp"
#include "config/profile.hpp"
#include "tiers/kernel_features.hpp"
#include "tiers/tier.hpp"

namespace corral {

bool has_cgroup_controller(const kernel_features& features, const std::string& name);

// Timeout, the limits whose controllers this kernel offers, and the filesystem, network
// and environment boundary; nothing at all while the tier is unavailable.
tier_capabilities leased_capabilities(bool available, const kernel_features& features, network_mode network);

// For a launch plan: the asked-for limits the lease holds here, as " (memory, pids)" for
// the isolation line (empty when none); each asked-for one it cannot hold is named in
// `not_enforced` as "<name>_limit".
std::string held_limits(const limits& asked, const kernel_features& features, std::vector<std::string>& not_enforced);

} // namespace corral
