// What the workspace registry (workspace_registry.hpp) holds, and the small steps on it
// that both of its files use: the lifecycle (workspace_registry.cpp) and the snapshot
// flows (registry_snapshots.cpp). Only those two include this.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/stateful_actor.hpp>

#include "actors/sessions/session_messages.hpp"
#include "actors/workspaces/workspace_files.hpp"
#include "actors/workspaces/workspace_holder.hpp"
#include "actors/workspaces/workspace_messages.hpp"
#include "actors/workspaces/workspace_registry.hpp"

namespace corral::registry {

using clock = std::chrono::steady_clock;

std::int64_t unix_now();

// A terminal the workspace keeps (workspace_messages.hpp), monitored by the registry.
struct resident_terminal {
  caf::actor actor;
  terminal_listing listing;
};

struct workspace_entry {
  workspace_record record;
  std::string dir;  // <registry dir>/<id>
  // ready: lends itself and takes every call. snapshotting: its files are being archived,
  // so nothing may change them (no execution, no mutating file call). restoring: its files
  // are being unpacked from a snapshot; nothing but list and inspect until that is done.
  workspace_phase phase = workspace_phase::ready;
  // The executions and stdio sessions borrowing it now, by loan number: what each runs.
  std::map<std::uint64_t, running_item> loans;
  // Its background processes as last listed (after a step left some, or a kill).
  std::vector<running_item> background;
  // <dir>/running.json, open once it is first written (shared: entries are copied).
  std::shared_ptr<running_journal> journal_file;
  // Its holder (workspace_holder.hpp), spawned at the first step and linked to the
  // registry; `holds` says whether this workspace has one at all (not in the allow-list
  // network mode).
  caf::actor holder;
  bool holds = false;
  // By session number, so oldest first. A terminal with a viewer keeps the workspace in
  // use (its idle clock stands still); one nobody watches does not.
  std::map<std::uint64_t, resident_terminal> terminals;
  clock::time_point last_used = clock::now();
  std::int64_t last_used_at = unix_now();
};

struct registry_state {
  workspace_registry_config config;
  std::string snapshots_dir;  // <dir>/snapshots
  std::map<std::string, workspace_entry> entries;  // by id
  std::map<std::string, std::size_t> restoring_from;  // snapshot id -> restores reading it now
  std::uint64_t next_loan = 1;
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

// What runs in a workspace, journaled beside its record (registry_journal.cpp).
std::uint64_t lend(registry_state& st, workspace_entry& e, running_item what);
void take_back(workspace_entry& e, std::uint64_t loan);
// <dir>/running.json from the loans, the terminals and the background processes.
void journal(workspace_entry& e);
// At adoption: what the journal lists was lost with the runtime that served it.
void note_lost(workspace_entry& e);
// The processes in a workspace (its holder's cgroup; none without a holder), to `then`;
// those left running by ended steps go into the journal on the way.
void list_processes(self_ptr self, const std::string& id, std::function<void(process_list)> then);
// The same for the journal alone.
void refresh_background(self_ptr self, const std::string& id);

// The terminals a workspace keeps (registry_terminals.cpp).
void keep_terminal(self_ptr self, const std::string& id, std::uint64_t loan, caf::actor terminal, std::uint64_t number,
                   std::vector<std::string> argv);
terminal_list terminals_of(registry_state& st, const std::string& ref, const std::string& principal);
terminal_found terminal_named(registry_state& st, const std::string& ref, const std::string& principal,
                              const std::string& terminal);
void note_viewers(registry_state& st, const terminal_viewers& v);
// A terminal's actor went: out of its workspace's list. False: it was none of them.
bool forget_terminal(registry_state& st, const caf::actor_addr& gone);
bool watched(const workspace_entry& e);
// Ending a workspace ends its terminals (its holder then kills what is left inside).
void end_terminals(self_ptr self, workspace_entry& e);

// The snapshot flows (registry_snapshots.cpp).
caf::result<workspace_reply> restore_into(self_ptr self, workspace_entry e);
caf::result<snapshot_reply> take_snapshot_of(self_ptr self, const std::string& ref, const std::string& principal);
snapshot_list snapshots_of(self_ptr self, const std::string& principal);
snapshot_reply snapshot_named(self_ptr self, const std::string& id, const std::string& principal);
snapshot_reply remove_snapshot_named(self_ptr self, const std::string& id, const std::string& principal);

} // namespace corral::registry
