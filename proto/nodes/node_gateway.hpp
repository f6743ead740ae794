// The actor a node publishes (proto/nodes/node_listener.hpp): the only part of the runtime a
// remote caller can reach. It takes an execution or a load question and nothing else, so
// a peer can neither stop the node (the supervisor's stop_atom) nor hand it local actors.
//
//   (exec_atom, exec_request) -> exec_outcome   delegated to the supervisor
//   (load_atom)               -> node_load
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "proto/nodes/node_messages.hpp"

namespace corral {

// `identity` carries the fixed part of every load answer (capacity, tier, descriptor);
// running and queued come from the supervisor each time. Quits when the supervisor does.
caf::actor spawn_node_gateway(caf::actor_system& sys, caf::actor supervisor, node_load identity);

} // namespace corral
