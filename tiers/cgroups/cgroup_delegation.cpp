#include "tiers/cgroups/cgroup_delegation.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "tiers/cgroups/cgroup_files.hpp"

namespace corral {

using namespace cgroupfs;

const char* const kRuntimeLeaf = "corral-runtime";

std::optional<std::string> own_v2_cgroup(const cgroup_mount& m, const std::string& proc_self_cgroup) {
  if (!m.v2) return std::nullopt;
  std::istringstream lines(proc_self_cgroup);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0::", 0) != 0) continue;  // v1 lines name a hierarchy id and controllers
    std::string path = line.substr(3);
    if (path.empty() || path[0] != '/') return std::nullopt;
    std::string below;
    if (m.root == "/") below = path;
    else if (path == m.root || path.rfind(m.root + "/", 0) == 0) below = path.substr(m.root.size());
    else return std::nullopt;
    if (below == "/") below.clear();
    return m.point + below;
  }
  return std::nullopt;
}

// AT_EACCESS: the effective ids, which the kernel checks on the writes, not the real ones.
bool cgroup_writable(const std::string& dir) {
  auto may = [](const std::string& path, int mode) { return ::faccessat(AT_FDCWD, path.c_str(), mode, AT_EACCESS) == 0; };
  return may(dir, W_OK | X_OK) && may(dir + "/cgroup.procs", W_OK) && may(dir + "/cgroup.subtree_control", W_OK);
}

status enter_runtime_leaf(const std::string& dir, pid_t self) {
  auto procs = read_small(dir + "/cgroup.procs");
  if (!procs) return access_failure("read " + dir + "/cgroup.procs", errno ? errno : EIO);
  bool inside = false;
  std::string others;
  for (auto& word : words(*procs)) {
    if (word == std::to_string(self)) inside = true;
    else others += (others.empty() ? "" : ", ") + word;
  }
  if (!others.empty())
    return make_failure(failure_kind::tier_unavailable,
                        "the delegated cgroup " + dir + " also holds processes that are not this corral (pid " +
                            others + "), and cgroup v2 lets a cgroup whose children have controllers hold none: "
                            "start corral in a cgroup of its own (`systemd-run --user --scope -p Delegate=yes "
                            "corral ...`; in a container, corral as its only process)");
  if (!inside) return ok();  // moved already (an earlier runtime of this process)
  std::string leaf = dir + "/" + kRuntimeLeaf;
  if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) return access_failure("mkdir " + leaf, errno);
  if (int err = write_small(leaf + "/cgroup.procs", std::to_string(self)))
    return access_failure("move corral (pid " + std::to_string(self) + ") into " + leaf, err);
  return ok();
}

} // namespace corral
