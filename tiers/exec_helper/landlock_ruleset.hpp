// The Landlock ruleset: every filesystem right this kernel's ABI knows is handled, and
// granted only on the jail's paths (read-only where the spec's rule says so); TCP bind and
// connect are handled with no port allowed when the network is off (ABI >= 4); signals and
// abstract unix sockets are scoped to the jail (ABI >= 6). A kernel below the spec's floor
// is refused: the boundary is never silently weaker than asked.
#pragma once

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

struct prepared_ruleset {
  int fd = -1;
  int abi = 0;
};

// Builds the ruleset (paths are the jail's, after the filesystem view). Returns 0 or an
// errno after reporting.
int prepare_landlock(const jail_spec& spec, prepared_ruleset& out);

// In the target, after PR_SET_NO_NEW_PRIVS: restricts it and closes the ruleset fd.
int restrict_self(prepared_ruleset& ruleset);

} // namespace corral::helper
