// A request may tighten the frozen profile's limits, never widen them. What happens when
// it asks for more is the operator's choice (profile.on_widen): refuse, or clamp to the
// profile's value.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "config/failure.hpp"
#include "config/profile.hpp"

namespace corral {

struct limit_request {
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> pids;
  std::optional<std::uint64_t> output_cap;
  std::optional<double> cpu_cores;
};

// Refuses absurd values (config/limits.hpp's floors), naming the floor.
status check_limit_floors(const limit_request& asked);

// The effective limits, or `refused` naming the limit that would widen, or
// `invalid_request` for a non-positive or non-finite value.
expected<limits> tighten(const profile& prof, const limit_request& asked);

} // namespace corral
