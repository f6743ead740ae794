#include "tiers/cgroups/cgroup_detect.hpp"

#include <algorithm>
#include <unistd.h>
#include <vector>

#include "tiers/cgroups/cgroup_files.hpp"
#include "tiers/cgroups/cgroup_mounts.hpp"

namespace corral {

using namespace cgroupfs;

// A first, read-only look at the mounts the lease's layout will use (one reading of
// mountinfo for both); the cgroup lease refines it (delegation, writability).
void detect_cgroups(kernel_features& f) {
  auto mounts = read_cgroup_mounts();
  for (const auto& m : mounts) {
    if (!m.v2) continue;
    auto offered = words(read_small(m.point + "/cgroup.controllers").value_or(""));
    for (const char* c : {"memory", "pids", "cpu"})
      if (contains(offered, c)) f.cgroup_controllers.push_back(c);
    if (!f.cgroup_controllers.empty()) {
      f.cgroup_version = 2;
      f.cgroup_root = m.point;
      return;
    }
  }
  // v1 (or hybrid, whose cgroup2 mount carries no controllers): a writable hierarchy per
  // controller.
  std::string root;
  std::vector<std::string> read_only;  // mount points, each once
  for (const char* c : {"memory", "pids", "cpu"}) {
    for (const auto& m : mounts) {
      if (m.v2 || !contains(m.controllers, c)) continue;
      if (::access((m.point + "/cgroup.procs").c_str(), W_OK) != 0) {
        if (std::find(read_only.begin(), read_only.end(), m.point) == read_only.end())
          read_only.push_back(m.point);
        continue;
      }
      f.cgroup_controllers.push_back(c);
      if (root.empty()) root = m.point.substr(0, m.point.rfind('/'));
      break;
    }
  }
  if (!f.cgroup_controllers.empty()) {
    f.cgroup_version = 1;
    f.cgroup_root = root.empty() ? "/" : root;
    return;
  }
  // Say which of the two it is: hierarchies that exist but are not this user's to write
  // (the usual case for a non-root user on v1), or none at all.
  std::string listed;
  for (auto& p : read_only) listed += (listed.empty() ? "" : ", ") + p;
  if (!read_only.empty())
    f.cgroup_error = "the cgroup v1 hierarchies (" + listed + ") are mounted but not writable by uid " +
                     std::to_string(::geteuid()) + ", and cgroup v1 cannot be delegated to a user";
  else
    f.cgroup_error = "no cgroup v2 mount offers memory, pids and cpu, and no cgroup v1 hierarchy has them";
}

} // namespace corral
