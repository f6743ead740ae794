#include "config/limits.hpp"

#include <algorithm>
#include <unistd.h>

namespace corral {

std::uint64_t default_memory_bytes() {
  constexpr std::uint64_t kCeiling = 1024 * kMiB;
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return kCeiling;
  auto quarter = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 4;
  return std::max(kMemoryFloor, std::min(kCeiling, quarter));
}

} // namespace corral
