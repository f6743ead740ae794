// Where an execution's cgroups may be made: the delegated v2 dir or the v1 hierarchies,
// and which directory names a lease may ever create, kill in or remove.
#pragma once

#include <string>
#include <vector>

#include "config/failure.hpp"
#include "tiers/cgroups/cgroup_mounts.hpp"
#include "tiers/kernel_features.hpp"

namespace corral {

// Where an execution's cgroups go: the dirs under which `corral/<exec_id>` is created.
struct cgroup_layout {
  int version = 0;
  std::string v2_root;  // v2: the delegated dir (its cgroup.subtree_control is ours to set)
  struct hierarchy {
    std::string mount;                     // its real mount point
    std::vector<std::string> controllers;  // of ours: memory, pids, cpu, cpuacct, freezer
  };
  std::vector<hierarchy> v1;  // v1: one per mount point (cpu,cpuacct may share one)
  std::vector<cgroup_mount> mounts;
};

// Resolves the layout for the version detection settled on; tier_unavailable when there
// is nothing usable.
expected<cgroup_layout> find_cgroup_layout(const kernel_features& features);

// The `<base>/corral` parents of a layout (for sweeping dirs a crash left without records).
std::vector<std::string> corral_parents(const cgroup_layout& layout);

// An exec id becomes a directory name: letters, digits, '-', '_', '.', not "." or "..".
bool valid_exec_id(const std::string& id);

// True when `dir` is exactly `<something below a cgroup mount>/corral/<exec_id>` with no
// "." or ".." parts: the only kind of directory a lease may kill in or remove.
bool is_lease_cgroup_dir(const std::vector<cgroup_mount>& mounts, const std::string& dir,
                         const std::string& exec_id);

} // namespace corral
