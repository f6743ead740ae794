#include "actors/workspaces/registry_state.hpp"

namespace corral::registry {

namespace {

// Promised by a workspace, not held by this version (see the header). Without a holder
// (the allow-list network mode) each step is a jail of its own: limits bound each step,
// and nothing outlives it.
const std::vector<std::string> kNotEnforced = {"workspace_disk_quota"};
const std::vector<std::string> kNotEnforcedWithoutHolder = {"workspace_disk_quota", "workspace_aggregate_limits",
                                                            "workspace_background_processes"};

} // namespace

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

failure no_such(const std::string& ref) {
  return make_failure(failure_kind::not_found, "no workspace '" + ref + "' here");
}

workspace_entry* find(registry_state& st, const std::string& ref, const std::string& principal) {
  for (auto& [id, e] : st.entries)
    if (e.record.owner == principal && (id == ref || (!e.record.name.empty() && e.record.name == ref))) return &e;
  return nullptr;
}

failure not_ready(const workspace_entry& e) {
  return make_failure(failure_kind::conflict, "workspace " + e.record.id + " is " + to_string(e.phase) +
                                                  "; try again when that is done");
}

bool reads_only(const file_call& call) {
  return call.what == file_call::op::read || call.what == file_call::op::list || call.what == file_call::op::stat;
}

workspace_paths paths_of(const workspace_entry& e) { return workspace_layout(e.dir); }

void touch(workspace_entry& e) {
  e.last_used = clock::now();
  e.last_used_at = unix_now();
}

workspace_info info_of(const workspace_entry& e) {
  workspace_info info;
  info.record = e.record;
  info.phase = e.phase;
  info.running = e.loans.size();
  info.terminals = e.terminals.size();
  info.last_used_at = e.last_used_at;
  auto idle_for = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - e.last_used).count();
  bool still = !e.loans.empty() || e.phase == workspace_phase::paused || watched(e);
  info.idle_left_ms = still ? e.record.idle_timeout_ms : std::max<std::int64_t>(0, e.record.idle_timeout_ms - idle_for);
  info.not_enforced = e.holds ? kNotEnforced : kNotEnforcedWithoutHolder;
  return info;
}

bool holders_enabled(const registry_state& st) {
  return st.config.holding.launcher && st.config.holding.boundary && st.config.prof &&
         st.config.prof->network != network_mode::allowlist;
}

} // namespace corral::registry
