// What runs in a workspace, kept on disk while this runtime serves it, so the next runtime
// can say what was lost when this one died (tiers/workspace/running_journal.hpp). Written
// on the registry's thread at each change: a borrow, its return, a terminal kept or gone,
// the background processes listed again. One pwrite in place each, not synced.
#include <functional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/workspaces/registry_state.hpp"

namespace corral::registry {

namespace {

// Listing the processes reads /proc for each member of the cgroup; ps has always waited
// this long for its holder.
constexpr std::chrono::seconds kListBound{30};

// Left running by an ended step (reparented to the workspace's init), as just listed.
void note_background(workspace_entry& e, const process_list& listed) {
  // The others belong to a step or a terminal, journaled as such.
  std::vector<running_item> now;
  auto seen = unix_now();
  for (auto& p : listed.items)
    if (p.ppid == 1) now.push_back({"process", {}, {}, p.pid, p.command, seen});
  e.background = std::move(now);
  journal(e);
}

} // namespace

std::uint64_t lend(registry_state& st, workspace_entry& e, running_item what) {
  auto loan = st.next_loan++;
  if (what.since == 0) what.since = unix_now();
  e.loans.emplace(loan, std::move(what));
  journal(e);
  return loan;
}

void take_back(workspace_entry& e, std::uint64_t loan) {
  if (e.loans.erase(loan) > 0) journal(e);
}

void journal(workspace_entry& e) {
  std::vector<running_item> items;
  for (auto& [loan, what] : e.loans) items.push_back(what);
  for (auto& [number, t] : e.terminals)
    items.push_back({"terminal", t.listing.argv, t.listing.id, 0, {}, t.listing.started_at});
  items.insert(items.end(), e.background.begin(), e.background.end());
  if (!e.journal_file) e.journal_file = std::make_shared<running_journal>(e.dir);
  if (auto s = e.journal_file->write(items); !s) spdlog::warn("workspace {}: {}", e.record.id, s.error().message);
}

void note_lost(workspace_entry& e) {
  auto lost = take_running(e.dir);
  if (!lost) {
    spdlog::warn("workspace {}: what ran in it before the restart is unknown: {}", e.record.id, lost.error().message);
    return;
  }
  if (lost->empty()) return;
  spdlog::warn("workspace {}: {} execution(s), terminal(s) or process(es) running in it ended with the runtime that "
               "served it; its files are kept",
               e.record.id, lost->size());
  e.record.lost = std::move(*lost);
  e.record.lost_at = unix_now();
  if (auto s = write_record(e.dir, e.record); !s) spdlog::warn("workspace {}: {}", e.record.id, s.error().message);
}

void list_processes(self_ptr self, const std::string& id, std::function<void(process_list)> then) {
  auto it = self->state.entries.find(id);
  if (it == self->state.entries.end() || !it->second.holder) return then(process_list{true, {}, {}});
  self->request(it->second.holder, kListBound, pids_atom::value)
      .then(
          [=](process_list& listed) {
            auto e = self->state.entries.find(id);
            if (e != self->state.entries.end() && listed.ok) note_background(e->second, listed);
            then(std::move(listed));
          },
          [=](caf::error& err) {
            then(process_list{false, make_failure(failure_kind::internal, self->system().render(err)), {}});
          });
}

void refresh_background(self_ptr self, const std::string& id) {
  list_processes(self, id, [](process_list) {});
}

} // namespace corral::registry
