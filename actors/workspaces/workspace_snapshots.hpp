// Snapshots of workspaces: <workspaces dir>/snapshots/<id>/{archive.tar.zst, meta.json}.
// Taking one archives a quiet workspace's files (tiers/workspace/snapshot_archive.hpp);
// restoring checks the archive's digest against its record, then builds a new workspace's
// files from it. Blocking, so the registry runs both on a file worker
// (workspace_files.hpp); the small record reads run on the registry itself.
#pragma once

#include <string>
#include <vector>

#include "actors/workspaces/workspace_files.hpp"
#include "actors/workspaces/workspace_messages.hpp"
#include "config/failure.hpp"
#include "tiers/workspace/snapshot_record.hpp"

namespace corral {

inline constexpr std::size_t kMaxSnapshotsPerOwner = 64;

// The archive is written beside its record in <id>.partial, synced, then renamed to <id>:
// a crash leaves a .partial that sweep_partial_snapshots removes, never a half snapshot.
snapshot_reply take_snapshot(const workspace_paths& at, snapshot_job job);
void sweep_partial_snapshots(const std::string& snapshots_dir);

// Fills at.root (empty) from snapshot `id` after checking its digest, then marks the
// result "creation": a restored workspace's changes start from what it was restored to.
changes_reply restore_snapshot(const workspace_paths& at, const std::string& snapshots_dir, const std::string& id);

// Another principal's snapshot answers as an absent one (ids cannot be probed).
expected<snapshot_record> find_snapshot(const std::string& snapshots_dir, const std::string& id, const std::string& owner);
std::vector<snapshot_record> list_snapshots(const std::string& snapshots_dir, const std::string& owner);
status remove_snapshot(const std::string& snapshots_dir, const std::string& id);

} // namespace corral

