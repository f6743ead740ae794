// [sandbox.workspaces]: where persistent workspaces keep their files and how many and how
// long they may live (actors/workspaces/). Requests only narrow these.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace corral {

// A named preset a workspace may be created from ([sandbox.workspaces.templates.NAME]): the
// E2B API's templates. Each only narrows the profile's limits, as a create's own do, and
// gives every process in it these environment variables (under the caller's own).
struct workspace_template {
  std::optional<std::uint64_t> memory_bytes;
  std::optional<double> cpu_cores;
  std::optional<std::uint64_t> pids;
  std::map<std::string, std::string> env;
};

struct workspace_settings {
  // Empty: $CORRAL_WORKSPACES_DIR if set (absolute), else /var/lib/corral/workspaces for root, else $XDG_STATE_HOME/corral/workspaces
  // (~/.local/state/corral/workspaces). Outside the runtime's state dir on purpose: the
  // state dir is /run, gone at reboot, and workspaces must outlive it.
  std::string dir;
  std::size_t max_per_owner = 8;
  std::size_t max_total = 32;
  // A workspace no execution or file call touched for this long ends; at most this old.
  std::chrono::milliseconds idle_timeout{30 * 60 * 1000};
  std::chrono::milliseconds max_lifetime{24 * 60 * 60 * 1000};
  // By name ([a-z0-9][a-z0-9._-]*; "base" is the profile as it is and cannot be redefined).
  std::map<std::string, workspace_template> templates;
};

// The directory `settings.dir` names, or the default for this user.
std::string workspaces_dir(const workspace_settings& settings);

} // namespace corral
