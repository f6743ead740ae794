// Allowlist network mode, the jail's side of the egress bridge: the jail's init, already
// in the jail's network namespace with loopback up, listens on 127.0.0.1 at each of the
// spec's egress ports and sends the listening sockets to the runtime (SCM_RIGHTS on the
// status channel, with the line "listeners N"). It keeps no copy: the runtime's loop
// accepts on them, so no proxy process lives inside the jail, and the program, which can
// connect to these ports only (Landlock), finds nothing else to reach.
//
// The contained tier has no network namespace of its own: its helper listens on the host's
// loopback at ports the kernel picks (the spec's ports are taken by anything there) and
// keeps their addresses, to which its connect broker (connect_broker.hpp) connects the
// program's sockets that asked for the spec's ports.
#pragma once

#include <netinet/in.h>
#include <vector>

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// 0, or an errno after reporting the failed step ("egress"). With `bound`, each listener
// gets an ephemeral port and its address is appended there, in the spec's port order.
int hand_over_egress_listeners(const jail_spec& spec, std::vector<sockaddr_in>* bound = nullptr);

} // namespace corral::helper
