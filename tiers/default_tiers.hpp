// The tiers a runtime offers on this machine, built from the frozen profile and the
// measured kernel features. The runtime and `corral doctor` both use this list, so what
// doctor reports is what a run would get.
#pragma once

#include <memory>
#include <string>

#include "config/profile.hpp"
#include "tiers/kernel_features.hpp"
#include "tiers/tier_registry.hpp"

namespace corral {

// `verdict_dir`: where the external tiers keep a successful trial between runs (a
// runtime's `<state>/preflight`); empty: every preflight runs its trial (corral doctor).
std::shared_ptr<tier_registry> build_default_tiers(const profile& prof, const kernel_features& features,
                                                   const std::string& verdict_dir = "");

} // namespace corral
