// The actor behind node_pool (proto/nodes/node_pool.hpp): it knows each node's connection and
// load, places executions, turns a lost node into errors for what was in flight there, and
// tries an unreachable node again in the background until it is back.
//
//   (exec_atom, exec_request) -> placed_outcome
//   (stats_atom)              -> std::vector<node_status>
#pragma once

#include <chrono>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include "proto/nodes/node_pool.hpp"
#include "proto/nodes/node_reach.hpp"

namespace corral {

struct placed_outcome {
  bool ok = false;
  failure error;
  placed_result placed;
};

caf::actor spawn_node_placement(caf::actor_system& sys, std::vector<placement_node> nodes,
                                std::chrono::milliseconds load_ttl, reconnect_policy reconnect);

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::placed_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<corral::node_status>)
