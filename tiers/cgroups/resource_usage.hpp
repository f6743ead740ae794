// What an execution's cgroups measured: the peak memory and the CPU time of everything
// that ran in them. Read by the cgroup set, carried up in every result.
#pragma once

#include <cstdint>

namespace corral {

struct resource_usage {
  std::uint64_t peak_memory_bytes = 0;
  std::uint64_t cpu_user_us = 0;
  std::uint64_t cpu_system_us = 0;
};

} // namespace corral
