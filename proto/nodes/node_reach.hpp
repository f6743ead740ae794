// Reaching one node (proto/nodes/node_listener.hpp): a bounded TCP probe, the TLS handshake
// (both certificates checked) and its first load report, which also carries the boundary
// it runs executions in. Blocking: node_pool calls it while connecting, and node_placement
// from a detached actor of its own when it reconnects a lost node.
#pragma once

#include <chrono>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include "proto/nodes/node_listener.hpp"
#include "proto/nodes/node_messages.hpp"

namespace corral {

// A node as one attempt found it: a handle and its load, or why there is none.
struct placement_node {
  node_address address;
  caf::actor handle;   // null: not reached
  std::string reason;  // why not
  node_load load;
};

// CAF's own connect has no deadline: a host that drops packets would hold the caller for
// the kernel's SYN retries (about two minutes). The probe fails such a host within
// `probe_bound`; the handshakes and the load report are bounded at 10 s each after it.
placement_node reach_node(caf::actor_system& sys, const node_address& address,
                          std::chrono::milliseconds probe_bound = std::chrono::seconds(5));

// Whether a TCP connection to `address` opens within `bound`: empty, or why not.
std::string probe_tcp(const node_address& address, std::chrono::milliseconds bound);

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::placement_node)
