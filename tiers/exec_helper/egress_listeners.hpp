// Allowlist network mode, the jail's side of the egress bridge: the jail's init, already
// in the jail's network namespace with loopback up, listens on 127.0.0.1 at each of the
// spec's egress ports and sends the listening sockets to the runtime (SCM_RIGHTS on the
// status channel, with the line "listeners N"). It keeps no copy: the runtime's loop
// accepts on them, so no proxy process lives inside the jail, and the program, which can
// connect to these ports only (Landlock), finds nothing else to reach.
#pragma once

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// 0, or an errno after reporting the failed step ("egress").
int hand_over_egress_listeners(const jail_spec& spec);

} // namespace corral::helper
