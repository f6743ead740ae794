// The helper's descendants, found through /proc/<pid>/task/<tid>/children. The helper is a
// child subreaper, so every descendant either has a living parent that is one, or was
// reparented to the helper: walking from the helper finds them all.
#pragma once

#include <sys/types.h>
#include <vector>

namespace corral::helper {

std::vector<pid_t> descendants_of(pid_t root);

// Signals every descendant and the target's process group. Never signals a group other
// than the target's: a descendant may have joined a group that is not ours.
void signal_tree(pid_t self, pid_t target_pgid, int sig);

} // namespace corral::helper
