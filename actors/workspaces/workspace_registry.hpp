// The workspace registry: one per runtime, the only owner of every workspace's directory
// and record (tiers/workspace/workspace_record.hpp). It creates, lists, lends and ends
// workspaces (protocol in workspace_messages.hpp), ends the idle and the expired on its
// own clock, and at start adopts the workspaces an earlier runtime left: their files are
// where they were, nothing was running in them that could still be.
//
// This first version lends a workspace's files to each execution, which runs in a fresh
// jail of its own with them at /work (the landlock tier's boundary, unchanged). So files
// persist between executions; processes do not outlive theirs, and the workspace's limits
// bound each execution, not all of them together (said in `not_enforced`).
#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "config/failure.hpp"
#include "config/profile.hpp"
#include "config/workspace_settings.hpp"

namespace corral {

struct workspace_registry_config {
  std::string dir;  // holds one directory per workspace (made 0700 if absent)
  workspace_settings settings;
  std::shared_ptr<const profile> prof;  // a workspace's limits narrow its limits, as a request's do
};

// Makes `dir` (and its parents) if absent; fails unless it is a directory of this uid,
// which it then makes mode 0700. At start when it exists (before the profile's masks: a
// root holding it hides it) and at every create.
expected<std::string> prepare_workspaces_dir(const std::string& dir);

caf::actor spawn_workspace_registry(caf::actor_system& system, workspace_registry_config config);

} // namespace corral
