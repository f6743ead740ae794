// What a node answers across machines (proto/nodes/node_gateway.hpp), and the registration that
// lets CAF's middleman carry it: both ends call add_node_message_types on their config.
//
//   (exec_atom, exec_request) -> exec_outcome
//   (load_atom)               -> node_load
#pragma once

#include <cstdint>
#include <string>

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>

namespace corral {

using load_atom = caf::atom_constant<caf::atom("load")>;

// A node's load and the boundary it runs executions in.
struct node_load {
  std::uint64_t running = 0;
  std::uint64_t queued = 0;
  std::uint64_t capacity = 0;  // executions it runs at once (max_concurrent)
  std::string tier;            // the profile's tier
  std::string descriptor;      // its profile descriptor, JSON (proto/describe/descriptor.hpp)
  std::string digest;          // "sha256:..." of that descriptor
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_load& x) {
  return f(caf::meta::type_name("node_load"), x.running, x.queued, x.capacity, x.tier, x.descriptor, x.digest);
}

// exec_request, exec_outcome and node_load, by the names both ends agree on.
void add_node_message_types(caf::actor_system_config& cfg);

} // namespace corral
