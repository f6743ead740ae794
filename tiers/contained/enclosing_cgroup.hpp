// The limits a container or pod puts on corral's own cgroup, read where the contained tier
// runs: they bound every execution together (and corral with them), not each one, and the
// kernel's OOM killer, not corral, picks what dies at the memory limit. Reported beside the
// per-process rlimits so an operator sees both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace corral {

struct enclosing_limits {
  std::string cgroup;                   // the cgroup read, as /proc/self/cgroup names it
  std::optional<std::uint64_t> memory;  // bytes
  std::optional<std::uint64_t> pids;
  std::optional<double> cpus;           // quota / period
  bool any() const { return memory || pids || cpus; }
  // "memory 512 MiB, pids 100, cpu 1.5" or "none".
  std::string describe() const;
};

// Reads cgroup v2 (memory.max, pids.max, cpu.max, the tightest of the cgroup and its
// visible ancestors) or v1 (memory.limit_in_bytes, pids.max, cpu.cfs_quota_us); limits
// that are "max" or unreadable are absent. `sys_fs_cgroup` and `proc_self_cgroup` are
// parameters for the tests.
enclosing_limits read_enclosing_limits(const std::string& sys_fs_cgroup = "/sys/fs/cgroup",
                                       const std::string& proc_self_cgroup = "/proc/self/cgroup");

} // namespace corral
