// Finds where corral can create per-execution cgroups and which controllers work there.
#pragma once

#include "tiers/kernel_features.hpp"

namespace corral {

void detect_cgroups(kernel_features& features);

} // namespace corral
