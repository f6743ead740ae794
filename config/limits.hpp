// Resource limits: what the operator's profile allows and what a request asks for.
// A request can only tighten the profile (config/tighten.hpp).
//
// With no profile, the defaults below hold: a fork bomb meets the pids limit, a runaway
// allocation the memory limit, a disk filler the size of the tmpfs it writes into. Pages a
// program writes into a tmpfs (/tmp, /dev/shm, the scratch dir when it is one) are charged
// to the memory cgroup of the writer, so the memory limit bounds them all together too.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace corral {

inline constexpr std::uint64_t kMiB = 1024 * 1024;

// Floors below which a limit is absurd (nothing starts) and is refused, in the profile and
// in a request alike, naming the floor.
inline constexpr std::uint64_t kMemoryFloor = 1 * kMiB;
inline constexpr std::uint64_t kPidsFloor = 1;
inline constexpr double kCpuFloor = 0.01;  // cpu.max's smallest quota: 1 ms per 100 ms period
inline constexpr std::uint64_t kTmpfsFloor = 1 * kMiB;

// 1 GiB or a quarter of this machine's RAM, whichever is smaller.
std::uint64_t default_memory_bytes();
inline constexpr std::uint64_t kDefaultPids = 512;

struct limits {
  std::chrono::milliseconds timeout{30'000};
  // Grace between SIGTERM and SIGKILL when an execution is terminated.
  std::chrono::milliseconds kill_grace{200};
  // Bytes kept from each of stdout and stderr; the rest is drained and counted.
  std::uint64_t output_cap = 1 * kMiB;
  // Largest stdin a request may bring.
  std::uint64_t stdin_cap = 64 * kMiB;
  // Each tier says whether it enforces these (not_enforced in every result).
  std::optional<std::uint64_t> memory_bytes = default_memory_bytes();
  std::optional<std::uint64_t> pids = kDefaultPids;
  std::optional<double> cpu_cores;
  // What the jail's /tmp, /dev/shm and scratch dir (/work) may hold, each a tmpfs of this
  // size (the scratch dir only where the runtime may mount: see tiers/jail/scratch_dir.hpp).
  std::uint64_t tmp_bytes = 256 * kMiB;
  std::uint64_t shm_bytes = 64 * kMiB;
  std::uint64_t scratch_bytes = 512 * kMiB;
};

} // namespace corral
