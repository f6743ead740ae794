// The workspace registry: one per runtime, the only owner of every workspace's directory
// and record (tiers/workspace/workspace_record.hpp). It creates, lists, lends and ends
// workspaces (protocol in workspace_messages.hpp), ends the idle and the expired on its
// own clock, and at start adopts the workspaces an earlier runtime left: their files are
// where they were, nothing was running in them that could still be.
//
// Each workspace gets a holder (workspace_holder.hpp) at its first step: the jail every
// step enters, and the cgroup budget they share. Pausing freezes it, ending stops it (every
// process inside is killed) before the files go. In the allow-list network mode a
// workspace has no holder: its steps are jails of their own with its files at /work, so
// nothing outlives a step and limits bound each (said in `not_enforced`).
#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "config/failure.hpp"
#include "config/profile.hpp"
#include "config/workspace_settings.hpp"
#include "actors/workspaces/workspace_holder.hpp"

namespace corral {

struct workspace_registry_config {
  std::string dir;  // holds one directory per workspace (made 0700 if absent)
  workspace_settings settings;
  std::shared_ptr<const profile> prof;  // a workspace's limits narrow its limits, as a request's do
  // What each workspace's holder is launched with; without a launcher, no holders (each
  // step is then a jail of its own with the workspace's files at /work).
  holder_env holding;
};

// Makes `dir` (and its parents) if absent; fails unless it is a directory of this uid,
// which it then makes mode 0700. At start when it exists (before the profile's masks: a
// root holding it hides it) and at every create.
expected<std::string> prepare_workspaces_dir(const std::string& dir);

caf::actor spawn_workspace_registry(caf::actor_system& system, workspace_registry_config config);

} // namespace corral
