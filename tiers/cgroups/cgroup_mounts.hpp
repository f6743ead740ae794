// Where the cgroup hierarchies are mounted in this mount namespace (/proc/self/mountinfo):
// the one source both the start-up detection and the lease's layout read.
#pragma once

#include <string>
#include <vector>

namespace corral {

struct cgroup_mount {
  std::string point;                     // where it is mounted, unescaped
  bool v2 = false;                       // cgroup2 (unified) rather than a v1 hierarchy
  std::vector<std::string> controllers;  // v1: from the super options (cpu, cpuacct, ...)
  std::string root = "/";                // the cgroup shown at `point` (mountinfo's root field)
};

// Every cgroup and cgroup2 mount of this mount namespace, from /proc/self/mountinfo.
std::vector<cgroup_mount> read_cgroup_mounts();
std::vector<cgroup_mount> parse_cgroup_mounts(const std::string& mountinfo);

// The controllers corral uses and looks for in v1 mount options.
const std::vector<std::string>& our_cgroup_controllers();

} // namespace corral
