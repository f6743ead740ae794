// The registry's snapshot flows: taking a snapshot of a workspace between executions, a new workspace
// restored from one, and the snapshot records (listed, inspected, removed) of a principal.
#include <filesystem>
#include <optional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/leases/lease_messages.hpp"
#include "actors/workspaces/registry_state.hpp"
#include "actors/workspaces/workspace_snapshots.hpp"

namespace corral::registry {

namespace fs = std::filesystem;

// A workspace made from a snapshot is listed (it counts against the caps, its name is
// taken) but lends itself to nothing until its files are unpacked and checked; if that
// fails, it goes again and the caller hears why.
caf::result<workspace_reply> restore_into(self_ptr self, workspace_entry e) {
  auto& st = self->state;
  auto id = e.record.id;
  auto snapshot = e.record.from_snapshot;
  e.phase = workspace_phase::restoring;
  auto paths = paths_of(e);
  st.entries.emplace(id, std::move(e));
  ++st.restoring_from[snapshot];
  auto rp = self->make_response_promise<workspace_reply>();
  auto finish = [self, rp, id, snapshot](std::optional<failure> failed) mutable {
    auto& s = self->state;
    if (--s.restoring_from[snapshot] == 0) s.restoring_from.erase(snapshot);
    auto it = s.entries.find(id);
    if (it == s.entries.end()) {
      rp.deliver(workspace_reply{false, make_failure(failure_kind::refused, "the runtime stopped while restoring"), {}});
      return;
    }
    auto& entry = it->second;
    if (!failed)
      if (auto written = write_record(entry.dir, entry.record); !written) failed = written.error();
    if (failed) {
      std::error_code ec;
      fs::remove_all(entry.dir, ec);
      s.entries.erase(it);
      rp.deliver(workspace_reply{false, std::move(*failed), {}});
      return;
    }
    entry.phase = workspace_phase::ready;
    touch(entry);
    spdlog::info("workspace {} restored from snapshot {} for {}", id, snapshot, entry.record.owner);
    rp.deliver(workspace_reply{true, {}, info_of(entry)});
  };
  self->request(spawn_file_worker(self->system(), paths), caf::infinite, ws_restore_atom::value, st.snapshots_dir, snapshot)
      .then([finish](changes_reply& r) mutable { finish(r.ok ? std::nullopt : std::optional<failure>(r.error)); },
            [finish](caf::error& err) mutable {
              finish(make_failure(failure_kind::internal, "the restore's worker failed: " + caf::to_string(err)));
            });
  return rp;
}

// Archives a workspace between executions (its background processes frozen meanwhile):
// until the archive is written it lends itself to no execution and takes no call that would
// change its files.
caf::result<snapshot_reply> take_snapshot_of(self_ptr self, const std::string& ref, const std::string& principal) {
  auto& st = self->state;
  auto* e = find(st, ref, principal);
  if (!e) return snapshot_reply{false, no_such(ref), {}};
  bool was_paused = e->phase == workspace_phase::paused;
  if (e->phase != workspace_phase::ready && !was_paused) return snapshot_reply{false, not_ready(*e), {}};
  if (!e->loans.empty())
    return snapshot_reply{false,
                          make_failure(failure_kind::conflict, "workspace " + e->record.id + " has " +
                                                                   std::to_string(e->loans.size()) +
                                                                   " execution(s) running; a snapshot is taken between "
                                                                   "executions (their background processes are frozen)"),
                          {}};
  if (list_snapshots(st.snapshots_dir, principal).size() >= kMaxSnapshotsPerOwner)
    return snapshot_reply{false,
                          make_failure(failure_kind::limit_exceeded,
                                       "at most " + std::to_string(kMaxSnapshotsPerOwner) + " snapshots per owner: remove one"),
                          {}};
  snapshot_job job;
  job.snapshots_dir = st.snapshots_dir;
  do job.record.id = new_snapshot_id();
  while (std::filesystem::exists(st.snapshots_dir + "/" + job.record.id));
  job.record.owner = principal;
  job.record.source = e->record.id;
  job.record.source_name = e->record.name;
  e->phase = workspace_phase::snapshotting;
  touch(*e);
  auto id = e->record.id;
  auto rp = self->make_response_promise<snapshot_reply>();
  // Background processes keep writing: frozen while the archive is written, the files are
  // as they were at one instant (a paused workspace is frozen already).
  auto holder = was_paused ? caf::actor{} : e->holder;
  auto after = was_paused ? workspace_phase::paused : workspace_phase::ready;
  auto finish = [self, rp, id, holder, after](snapshot_reply reply) mutable {
    if (holder) self->request(holder, kLeaseBound, freeze_atom::value, false).then([](lease_done&) {}, [](caf::error&) {});
    if (auto it = self->state.entries.find(id); it != self->state.entries.end()) {
      it->second.phase = after;
      touch(it->second);
    }
    if (reply.ok) spdlog::info("snapshot {} taken of workspace {} ({} bytes)", reply.record.id, id, reply.record.bytes);
    rp.deliver(std::move(reply));
  };
  auto archive = [self, finish, paths = paths_of(*e), job]() mutable {
    self->request(spawn_file_worker(self->system(), paths), caf::infinite, ws_snap_atom::value, std::move(job))
        .then([finish](snapshot_reply& r) mutable { finish(std::move(r)); },
              [finish](caf::error& err) mutable {
                finish(snapshot_reply{false, make_failure(failure_kind::internal, "the snapshot's worker failed: " + caf::to_string(err)), {}});
              });
  };
  if (!holder) {
    archive();
    return rp;
  }
  self->request(holder, kLeaseBound, freeze_atom::value, true)
      .then(
          [=](lease_done& frozen) mutable {
            if (frozen.ok) return archive();
            // Nothing was frozen (the freeze undid itself): no thaw is owed.
            auto it = self->state.entries.find(id);
            if (it != self->state.entries.end()) it->second.phase = after;
            rp.deliver(snapshot_reply{false, frozen.error, {}});
          },
          [=](caf::error& err) mutable {
            finish(snapshot_reply{false, make_failure(failure_kind::internal, "freezing the workspace: " + caf::to_string(err)), {}});
          });
  return rp;
}

snapshot_list snapshots_of(self_ptr self, const std::string& principal) {
  return snapshot_list{list_snapshots(self->state.snapshots_dir, principal)};
}

snapshot_reply snapshot_named(self_ptr self, const std::string& id, const std::string& principal) {
  auto found = find_snapshot(self->state.snapshots_dir, id, principal);
  if (!found) return {false, found.error(), {}};
  return {true, {}, std::move(*found)};
}

snapshot_reply remove_snapshot_named(self_ptr self, const std::string& id, const std::string& principal) {
  auto& s = self->state;
  auto found = find_snapshot(s.snapshots_dir, id, principal);
  if (!found) return {false, found.error(), {}};
  if (s.restoring_from.count(id))
    return {false, make_failure(failure_kind::conflict, "snapshot " + id + " is being restored from; remove it after"), {}};
  if (auto removed = remove_snapshot(s.snapshots_dir, id); !removed) return {false, removed.error(), {}};
  spdlog::info("snapshot {} removed", id);
  return {true, {}, std::move(*found)};
}

} // namespace corral::registry
