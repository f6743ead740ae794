#include "tiers/cgroups/cgroup_detect.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

#include "tiers/cgroups/cgroup_delegation.hpp"
#include "tiers/cgroups/cgroup_files.hpp"
#include "tiers/cgroups/cgroup_mounts.hpp"

namespace corral {

using namespace cgroupfs;

namespace {

// Which of memory, pids and cpu `dir`'s cgroup.controllers offers (v2).
std::vector<std::string> offered_controllers(const std::string& dir) {
  std::vector<std::string> out;
  auto offered = words(read_small(dir + "/cgroup.controllers").value_or(""));
  for (const char* c : {"memory", "pids", "cpu"})
    if (contains(offered, c)) out.push_back(c);
  return out;
}

} // namespace

void detect_cgroups(kernel_features& f) {
  detect_cgroups(f, read_cgroup_mounts(), read_small("/proc/self/cgroup").value_or(""));
}

// A first look at the mounts the lease's layout will use (one reading of mountinfo for
// both), changing nothing: runtime::start moves corral into its leaf of a delegated subtree.
void detect_cgroups(kernel_features& f, const std::vector<cgroup_mount>& mounts, const std::string& proc_self_cgroup) {
  std::string v2_refusal;  // a v2 mount with controllers that this user may not use
  for (const auto& m : mounts) {
    if (!m.v2) continue;
    auto offered = offered_controllers(m.point);
    if (offered.empty()) continue;  // hybrid: the controllers are on v1 hierarchies
    auto own = own_v2_cgroup(m, proc_self_cgroup);
    // A second runtime in this process finds itself in the leaf the first one made: the
    // cgroup to use is the leaf's parent.
    if (own && own->size() > m.point.size() && own->substr(own->rfind('/') + 1) == kRuntimeLeaf) {
      auto parent = own->substr(0, own->rfind('/'));
      if (parent == m.point || cgroup_writable(parent)) own = parent;
    }
    if (cgroup_writable(m.point)) {
      f.cgroup_version = 2;
      f.cgroup_root = m.point;
      f.cgroup_controllers = offered;
      // In a cgroup namespace (a container's) the mount shows a cgroup like any other (the
      // hierarchy's real root has no cgroup.type), and corral may be running in it.
      f.cgroup_delegated = own && *own == m.point && exists(m.point + "/cgroup.type");
      return;
    }
    // Not root: the cgroup this process runs in, when it is delegated to this user.
    if (own && *own != m.point && cgroup_writable(*own)) {
      auto delegated = offered_controllers(*own);
      if (delegated.empty()) {
        f.cgroup_error = "the cgroup v2 subtree " + *own + " is delegated to uid " + std::to_string(::geteuid()) +
                         " but offers none of memory, pids and cpu (its parent enables none for it; systemd: "
                         "Delegate=memory pids cpu on the unit, and for a --user scope the user manager needs "
                         "them too: a user@.service.d drop-in with the same line)";
        return;
      }
      f.cgroup_version = 2;
      f.cgroup_root = *own;
      f.cgroup_delegated = true;
      f.cgroup_controllers = delegated;
      return;
    }
    bool read_only = ::faccessat(AT_FDCWD, (m.point + "/cgroup.procs").c_str(), W_OK, AT_EACCESS) != 0 && errno == EROFS;
    v2_refusal = "cgroup v2 at " + m.point +
                 (read_only ? std::string(" is mounted read-only")
                            : " is not writable by uid " + std::to_string(::geteuid())) +
                 ", and the cgroup this process runs in (" +
                 (own ? *own : "not visible under " + m.point + ": another cgroup namespace, or a mount of another subtree") +
                 ") is not delegated to it";
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
  if (!v2_refusal.empty())
    f.cgroup_error = v2_refusal;
  else if (!read_only.empty())
    f.cgroup_error = "the cgroup v1 hierarchies (" + listed + ") are mounted but not writable by uid " +
                     std::to_string(::geteuid()) + ", and cgroup v1 cannot be delegated to a user";
  else
    f.cgroup_error = "no cgroup v2 mount offers memory, pids and cpu, and no cgroup v1 hierarchy has them";
}

} // namespace corral
