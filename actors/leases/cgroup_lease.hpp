// The landlock tier's lease: the execution's own cgroups (v2, or v1 hierarchies), with its
// memory, pids and cpu limits, recorded on disk before the child starts. Speaks the
// protocol of lease_messages.hpp; finish kills all that is left, waits until the cgroups
// are empty, reads the counters and removes the cgroups and the record.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "config/limits.hpp"
#include "tiers/cgroups/cgroup_layout.hpp"
#include "tiers/kernel_features.hpp"

namespace corral {

struct cgroup_lease_config {
  std::string exec_id;     // names the cgroups and the record; [A-Za-z0-9._-]
  std::string leases_dir;  // <state_dir>/leases
  limits lim;              // memory_bytes, pids and cpu_cores are applied when set
  std::chrono::milliseconds kill_grace{200};  // SIGTERM to SIGKILL on terminate
  kernel_features features;
  // Found once by the runtime (mountinfo read at start, like the features); unset: the
  // lease finds it itself, and says why when there is none.
  std::shared_ptr<const cgroup_layout> layout;
  bool nested = false;  // the tier's runtime makes its own cgroups below ours
  // A workspace's budget, held by its holder for as long as the workspace runs: an OOM
  // kill takes a process, not the whole set (the holder is pid 1 of the workspace), and
  // the lease also freezes and lists its members.
  bool workspace = false;
};

caf::actor spawn_cgroup_lease(caf::actor_system& sys, cgroup_lease_config config);

} // namespace corral
