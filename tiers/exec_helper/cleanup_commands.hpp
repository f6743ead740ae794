// The spec's cleanup commands, run by the helper in host mode once the target and all its
// descendants are gone: what an external runtime leaves outside the process tree (a
// runsc state dir, a container the engine keeps) is removed before the helper reports its
// own exit, so the execution ends only when nothing of it is left.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace corral::helper {

// Runs each argv in turn (stdio on /dev/null, its own process group, default signals),
// killing any that outlives `bound`. Failures are not fatal: later commands still run.
void run_cleanup(const std::vector<std::vector<std::string>>& commands, std::chrono::milliseconds bound);

} // namespace corral::helper
