// The jail's filesystem: a fresh tmpfs root holding only the spec's mounts (read-only
// system directories, the granted roots, a private /tmp, the scratch dir, a minimal /dev
// and a /proc of the new pid namespace), then pivot_root into it and detach the host's
// tree. Runs in the cloned child, which holds every capability of its new user namespace.
//
// Order (why):
//   1. make every mount a slave   — nothing we mount propagates back to the host
//   2. tmpfs base on /tmp, pivot_root into it, the host tree at /oldroot
//                                  — bind sources are reached as /oldroot/<path>
//   3. a tmpfs /newroot; each spec mount under it, in the spec's order (the tier orders
//      them: system dirs, /tmp, /dev, /proc, the scratch dir, the roots outer before
//      inner, then the masks over what the roots show)
//   4. detach /oldroot, pivot_root into /newroot, detach the base
//   5. the new root read-only     — the program can write only where a mount says so
#pragma once

#include <vector>

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// Returns 0, or an errno after reporting which mount failed and why. `trees`: one fd per
// spec mount, an idmapped tree to attach or -1 (idmapped_roots.hpp).
int build_filesystem_view(const jail_spec& spec, const std::vector<int>& trees);

} // namespace corral::helper
