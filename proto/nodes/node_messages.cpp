#include "proto/nodes/node_messages.hpp"

#include "actors/execution_messages.hpp"

namespace corral {

void add_node_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<exec_request>("corral::exec_request");
  cfg.add_message_type<exec_outcome>("corral::exec_outcome");
  cfg.add_message_type<node_load>("corral::node_load");
}

} // namespace corral
