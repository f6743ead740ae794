// Whether a tier can hold a profile at all, apart from the machine: the masks over
// protected paths and a working directory inside the view are built by the landlock tier
// only, and so is a network allow-list. The planner refuses such a request with this
// reason before anything starts, and `corral doctor` and the daemon's `capabilities` show
// it on the tier's line, so what would be refused is visible before it is asked for.
#pragma once

#include <optional>

#include "config/failure.hpp"
#include "config/profile.hpp"
#include "tiers/tier.hpp"

namespace corral {

std::optional<failure> profile_refusal(const tier& t, const profile& p);

} // namespace corral
