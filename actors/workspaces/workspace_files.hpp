// File calls and change lists on a workspace's files, done from the host side beneath its
// root. Blocking (disk, hashing), so the registry runs each in a detached actor of its own
// (spawn_file_worker) and never on its own thread.
#pragma once

#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "actors/workspaces/workspace_messages.hpp"

namespace corral {

// Where one workspace keeps what: its files (`root`, the jail's /work) and its marks.
struct workspace_paths {
  std::string root;
  std::string marks;  // <workspace dir>/marks: manifests, outside the files
  std::string mount_at = kWorkspaceMountAt;
  std::string hashes;  // <workspace dir>/hashcache (tiers/workspace/hash_cache.hpp); "": none
};

// The one layout of a workspace's directory: <dir>/root (the files), <dir>/marks and
// <dir>/hashcache beside them, outside what its programs reach.
workspace_paths workspace_layout(const std::string& dir);
// The same, from the root an execution borrowed (<dir>/root).
workspace_paths workspace_layout_of_root(const std::string& root);

inline constexpr std::size_t kMaxTreeEntries = 1'000'000;  // a scan past this is refused
inline constexpr std::size_t kMaxChanges = 10'000;         // a longer list is truncated
inline constexpr std::size_t kMaxMarks = 32;               // user marks per workspace

file_reply run_file_call(const workspace_paths& at, const file_call& call);

// The files now, hashing only what changed since the last scan (at.hashes).
expected<std::vector<manifest_entry>> scan_files(const workspace_tree& tree, const workspace_paths& at);

// The manifest of the files now, saved as mark `label` ("creation" at create).
changes_reply set_mark(const workspace_paths& at, const std::string& label);
// What changed since mark `since`: added, modified and removed, sorted by path.
changes_reply changes_since(const workspace_paths& at, const std::string& since);

// The manifest of the files now, kept in memory (an execution's "before"), and what changed
// since such a manifest: the pair behind exec_request::changes.
tree_manifest scan_workspace(const workspace_paths& at);
changes_reply changes_against(const workspace_paths& at, const std::vector<manifest_entry>& before);

// An actor on its own thread that answers one file_call, mark, changes, scan, diff,
// snapshot or restore request (workspace_snapshots.hpp), then quits.
caf::actor spawn_file_worker(caf::actor_system& system, workspace_paths at);

} // namespace corral
