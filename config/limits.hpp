// Resource limits: what the operator's profile allows and what a request asks for.
// A request can only tighten the profile (see config/tighten.hpp once it exists).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace corral {

inline constexpr std::uint64_t kMiB = 1024 * 1024;

struct limits {
  std::chrono::milliseconds timeout{30'000};
  // Grace between SIGTERM and SIGKILL when an execution is terminated.
  std::chrono::milliseconds kill_grace{200};
  // Bytes kept from each of stdout and stderr; the rest is drained and counted.
  std::uint64_t output_cap = 1 * kMiB;
  // Largest stdin a request may bring.
  std::uint64_t stdin_cap = 64 * kMiB;
  // Unset means "no limit requested"; each tier says whether it enforces what is set.
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> pids;
  std::optional<double> cpu_cores;
};

} // namespace corral
