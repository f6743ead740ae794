// The supervisor: one per runtime. It validates each request against the frozen profile,
// admits it (at most `max_concurrent` run at once; the rest wait in order), spawns its
// execution and monitors it. The execution answers the caller directly.
//
//   (exec_atom, exec_request) -> exec_outcome
//   (stats_atom)              -> supervisor_stats
//   (stop_atom)               -> bool   cancels everything, answers when all have ended
//
// With warm_jails, it also keeps a warm pool (linked) for the profile's own tier.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/leases/lease_request.hpp"
#include "actors/execution.hpp"
#include "config/profile.hpp"
#include "tiers/tier_registry.hpp"

namespace corral {

class child_launcher;

struct supervisor_config {
  std::shared_ptr<const profile> prof;
  std::shared_ptr<const tier_registry> tiers;
  selection_policy policy;
  child_launcher* launcher = nullptr;  // every child of the runtime starts through it
  std::string scratch_parent;
  std::string caller_path;
  std::size_t max_concurrent = 16;
  // Executions one client (exec_request::client, not 0) may have waiting for a slot; past
  // it a request is refused (limit_exceeded) rather than queued without bound.
  std::size_t max_queued_per_client = 64;
  lease_factory make_lease;
  // Jails kept armed for the profile's tier when it supports them (actors/warm/warm_pool.hpp).
  std::size_t warm_jails = 0;
  std::chrono::milliseconds warm_demand_window{60'000};
  // Prefixes every execution id; the runtime's claim in the state dir (instance_claim).
  // Empty: a random one (a supervisor without a state dir of its own, as in tests).
  std::string instance;
  // The workspace registry (actors/workspaces/); none: requests naming a workspace are refused.
  caf::actor workspaces;
};

struct supervisor_state;

caf::behavior supervisor(caf::stateful_actor<supervisor_state>* self, supervisor_config config);

// Spawns a supervisor (defined where supervisor_state is complete).
caf::actor spawn_supervisor(caf::actor_system& system, supervisor_config config);

} // namespace corral
