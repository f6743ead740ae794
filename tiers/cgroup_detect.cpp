#include "tiers/cgroup_detect.hpp"

#include <fstream>
#include <sstream>
#include <unistd.h>

namespace corral {

// A first, read-only look; the cgroup lease refines this (delegation, writability).
void detect_cgroups(kernel_features& f) {
  std::ifstream v2("/sys/fs/cgroup/cgroup.controllers");
  if (v2) {
    std::string line;
    std::getline(v2, line);
    std::istringstream words(line);
    for (std::string c; words >> c;)
      if (c == "memory" || c == "pids" || c == "cpu") f.cgroup_controllers.push_back(c);
    if (!f.cgroup_controllers.empty()) {
      f.cgroup_version = 2;
      f.cgroup_root = "/sys/fs/cgroup";
      return;
    }
  }
  for (const char* c : {"memory", "pids", "cpu"}) {
    std::string dir = std::string("/sys/fs/cgroup/") + c;
    if (::access((dir + "/cgroup.procs").c_str(), W_OK) == 0) f.cgroup_controllers.push_back(c);
  }
  if (!f.cgroup_controllers.empty()) {
    f.cgroup_version = 1;
    f.cgroup_root = "/sys/fs/cgroup";
    return;
  }
  f.cgroup_error = "no writable cgroup v2 with memory/pids/cpu delegated, and no v1 hierarchies";
}

} // namespace corral
