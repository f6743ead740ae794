// A landlock plan turned into a workspace's holder or into a step entering it. The tier
// plans both as it plans any jail (the workspace's files at /work, the profile's view,
// rules, limits and ids); these only change what differs, so the boundary of a step in a
// workspace is the same plan as a one-shot execution's, minus what the holder owns.
#pragma once

#include "tiers/tier.hpp"

namespace corral {

// Hold mode. Inside a workspace Landlock's signal and abstract-socket scopes and its TCP
// rules are off for the holder and every step: each step is a Landlock domain of its own,
// a sibling of the others, and the scopes would forbid `kill` of an earlier step's server
// and any socket between steps; the workspace's own pid and network namespaces bound them.
void as_holder(launch_plan& plan);

// Enter mode: no mounts and no egress listeners of its own (the holder's view and network
// are the workspace's), the holder to enter, and whether leftovers stay.
void as_entering(launch_plan& plan, const holder_ref& holder, bool leave_running);

} // namespace corral
