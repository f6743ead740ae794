// The user namespace's id maps, written by the helper (still in the caller's namespace)
// for its cloned child: one uid and one gid, nothing else of the host's is mapped.
#pragma once

#include <sys/types.h>

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// Returns 0 or an errno after reporting which file failed.
int write_id_maps(pid_t child, const jail_spec& spec);

// A root helper drops its supplementary groups before the clone: the child would keep
// them, and a group the host's files grant access to must not follow it into the jail.
int drop_supplementary_groups();

} // namespace corral::helper
