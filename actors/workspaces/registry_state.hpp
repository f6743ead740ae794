// What the workspace registry (workspace_registry.hpp) holds, and the small steps on it
// that both of its files use: the lifecycle (workspace_registry.cpp) and the snapshot
// flows (registry_snapshots.cpp). Only those two include this.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include <caf/stateful_actor.hpp>

#include "actors/workspaces/workspace_files.hpp"
#include "actors/workspaces/workspace_holder.hpp"
#include "actors/workspaces/workspace_messages.hpp"
#include "actors/workspaces/workspace_registry.hpp"

namespace corral::registry {

using clock = std::chrono::steady_clock;

std::int64_t unix_now();

struct workspace_entry {
  workspace_record record;
  std::string dir;  // <registry dir>/<id>
  // ready: lends itself and takes every call. snapshotting: its files are being archived,
  // so nothing may change them (no execution, no mutating file call). restoring: its files
  // are being unpacked from a snapshot; nothing but list and inspect until that is done.
  workspace_phase phase = workspace_phase::ready;
  std::size_t running = 0;
  // Its holder (workspace_holder.hpp), spawned at the first step and linked to the
  // registry; `holds` says whether this workspace has one at all (not in the allow-list
  // network mode).
  caf::actor holder;
  bool holds = false;
  clock::time_point last_used = clock::now();
  std::int64_t last_used_at = unix_now();
};

struct registry_state {
  workspace_registry_config config;
  std::string snapshots_dir;  // <dir>/snapshots
  std::map<std::string, workspace_entry> entries;  // by id
  std::map<std::string, std::size_t> restoring_from;  // snapshot id -> restores reading it now
  bool stopped = false;
  static inline const char* name = "workspace_registry";
};

using self_ptr = caf::stateful_actor<registry_state>*;

// The same words for another principal's workspace: ids cannot be probed.
failure no_such(const std::string& ref);
workspace_entry* find(registry_state& st, const std::string& ref, const std::string& principal);
// Why a workspace that is not ready refuses a call that needs it so.
failure not_ready(const workspace_entry& e);
// File calls that change nothing may go on while a snapshot is taken.
bool reads_only(const file_call& call);
workspace_paths paths_of(const workspace_entry& e);
// A file call or an execution counts as use: the idle clock starts again.
void touch(workspace_entry& e);
workspace_info info_of(const workspace_entry& e);
// Whether this runtime's workspaces get a holder (workspace_registry_config::holding).
bool holders_enabled(const registry_state& st);

// The snapshot flows (registry_snapshots.cpp).
caf::result<workspace_reply> restore_into(self_ptr self, workspace_entry e);
caf::result<snapshot_reply> take_snapshot_of(self_ptr self, const std::string& ref, const std::string& principal);
snapshot_list snapshots_of(self_ptr self, const std::string& principal);
snapshot_reply snapshot_named(self_ptr self, const std::string& id, const std::string& principal);
snapshot_reply remove_snapshot_named(self_ptr self, const std::string& id, const std::string& principal);

} // namespace corral::registry
