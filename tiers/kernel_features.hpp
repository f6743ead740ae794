// What this kernel can enforce, measured at start-up (never assumed from the version).
#pragma once

#include <string>
#include <vector>

namespace corral {

struct kernel_features {
  std::string kernel_release;      // uname -r
  int landlock_abi = 0;            // 0: Landlock unavailable
  std::string landlock_error;      // why 0
  bool seccomp = false;            // seccomp filter mode available
  bool user_namespaces = false;    // an unprivileged user namespace can be created
  std::string user_namespace_error;
  bool pidfd = false;              // pidfd_open (Linux 5.3+)
  int cgroup_version = 0;          // 2: unified with delegated controllers; 1: v1 hierarchies; 0: none
  std::string cgroup_root;         // where corral creates its cgroups (v2) or the v1 mount root
  // v2: cgroup_root is the cgroup corral runs in (delegated to this user, or a container's
  // cgroup-namespace root): runtime::start moves corral into a leaf of it first.
  bool cgroup_delegated = false;
  std::vector<std::string> cgroup_controllers;  // usable controllers: memory, pids, cpu
  std::string cgroup_error;
};

// Probes once; cheap enough for start-up (a few syscalls and one short-lived child for
// the user-namespace check).
kernel_features detect_kernel_features();

} // namespace corral
