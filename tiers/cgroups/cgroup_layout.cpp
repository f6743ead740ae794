#include "tiers/cgroups/cgroup_layout.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "tiers/cgroups/cgroup_files.hpp"

namespace corral {

using namespace cgroupfs;

expected<cgroup_layout> find_cgroup_layout(const kernel_features& features) {
  cgroup_layout l;
  l.mounts = read_cgroup_mounts();
  l.version = features.cgroup_version;
  if (l.version == 2) {
    l.v2_root = features.cgroup_root;
    bool under_v2 = std::any_of(l.mounts.begin(), l.mounts.end(), [&](const cgroup_mount& m) {
      return m.v2 && (l.v2_root == m.point || l.v2_root.rfind(m.point + "/", 0) == 0);
    });
    if (!under_v2)
      return make_failure(failure_kind::tier_unavailable,
                          "cgroup root " + l.v2_root + " is not on a cgroup2 mount (see /proc/self/mountinfo)");
    return l;
  }
  if (l.version == 1) {
    for (const auto& m : l.mounts) {
      if (m.v2 || m.controllers.empty()) continue;
      bool seen = std::any_of(l.v1.begin(), l.v1.end(), [&](const cgroup_layout::hierarchy& h) {
        return std::any_of(m.controllers.begin(), m.controllers.end(),
                           [&](const std::string& c) { return contains(h.controllers, c); });
      });
      if (!seen) l.v1.push_back({m.point, m.controllers});  // a bind mount of one we have
    }
    if (l.v1.empty())
      return make_failure(failure_kind::tier_unavailable,
                          "no cgroup v1 hierarchy with memory, pids, cpu, cpuacct or freezer is mounted");
    return l;
  }
  return make_failure(failure_kind::tier_unavailable,
                      "no usable cgroups: " + (features.cgroup_error.empty() ? std::string("none detected")
                                                                             : features.cgroup_error) +
                          "; " + kDelegateHint);
}

std::vector<std::string> corral_parents(const cgroup_layout& layout) {
  std::vector<std::string> out;
  if (layout.version == 2) out.push_back(layout.v2_root + "/corral");
  for (const auto& h : layout.v1) out.push_back(h.mount + "/corral");
  return out;
}

bool valid_exec_id(const std::string& id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

bool is_lease_cgroup_dir(const std::vector<cgroup_mount>& mounts, const std::string& dir,
                         const std::string& exec_id) {
  if (!valid_exec_id(exec_id) || dir.empty() || dir[0] != '/') return false;
  std::vector<std::string> parts;
  std::istringstream in(dir.substr(1));
  for (std::string p; std::getline(in, p, '/');) {
    if (p.empty() || p == "." || p == "..") return false;
    parts.push_back(p);
  }
  if (dir.back() == '/' || parts.size() < 2 || parts.back() != exec_id || parts[parts.size() - 2] != "corral")
    return false;
  // cgroupfs holds no symlinks, so a path textually below a cgroup mount stays in it.
  return std::any_of(mounts.begin(), mounts.end(), [&](const cgroup_mount& m) {
    std::string prefix = m.point == "/" ? "/" : m.point + "/";
    return dir.size() > prefix.size() && dir.compare(0, prefix.size(), prefix) == 0;
  });
}

} // namespace corral
