// The helper's half of idmapped roots (tiers/jail/idmapped_mount.hpp): before the clone, while
// the helper still holds CAP_SYS_ADMIN over the host's filesystems (the kernel requires it
// in the filesystem's user namespace), each `idmapped` rw_bind of the spec becomes a
// detached idmapped mount tree; the jail's init, cloned with a copy of these fds,
// attaches them with move_mount where the spec says (filesystem_view.cpp).
#pragma once

#include <vector>

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// One fd per spec mount, in order (-1 where the mount is not idmapped). Returns 0, or an
// errno after reporting which root failed and why: an asked-for idmap that cannot be made
// ends the launch (the runtime asked because its start-up probe said it would work).
int prepare_idmapped_trees(const jail_spec& spec, std::vector<int>& trees);

void close_trees(std::vector<int>& trees);

} // namespace corral::helper
