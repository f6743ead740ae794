// What a lease is made for: the execution id its cgroups and record are named by, the tier
// (which lease it needs: a cgroup set or a process group) and the limits to hold. An
// execution, a session and a warm jail all ask for one the same way (execution.hpp:
// lease_request_for), so no caller has to fake an execution plan to get a lease.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <caf/actor.hpp>

#include "config/limits.hpp"
#include "tiers/tier.hpp"

namespace corral {

struct lease_request {
  std::string exec_id;
  std::shared_ptr<const tier> boundary;
  limits effective;
  // Set for a step in a workspace with a holder: it runs in the workspace's cgroup, so its
  // lease is a share of the holder's (actors/leases/workspace_share_lease.hpp).
  caf::actor workspace_holder;
};

// Spawns the lease the tier needs, linked to nothing: the asker monitors it.
using lease_factory = std::function<caf::actor(const lease_request&)>;

} // namespace corral
