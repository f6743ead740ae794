// The JSON forms of the workspace methods (proto/PROTOCOL.md, "Workspaces"): their params
// decoded strictly (a wrong type or an unknown member is refused, naming it) and their
// results encoded. Shared by the daemon and its clients (the CLI's `corral workspace`).
// Paths go out as the jail sees them (/work/…): a caller never learns a host path.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "actors/workspaces/workspace_messages.hpp"
#include "tiers/workspace/snapshot_record.hpp"
#include "tiers/workspace/workspace_processes.hpp"
#include "config/failure.hpp"

namespace corral {

// workspace.create: name, idle_timeout and lifetime (seconds), memory_limit, pids_limit,
// cpu_cores, keep_files, from_snapshot.
expected<workspace_options> workspace_options_from_json(const nlohmann::json& params);
nlohmann::json workspace_options_to_json(const workspace_options& options);

// The `workspace` member every other method names its workspace by (id or name).
expected<std::string> workspace_ref_param(const nlohmann::json& params);

// workspace.files.<op>: `op` is the method's last part (read, write, append, list, stat,
// mkdir, remove, move); `workspace` is read apart (workspace_ref_param).
expected<file_call> file_call_from_json(const std::string& op, const nlohmann::json& params);
nlohmann::json file_call_to_json(const std::string& ref, const file_call& call);

nlohmann::json to_json(const workspace_info& info);
// A snapshot as workspace.snapshot, snapshot.list and snapshot.inspect answer it: id,
// source workspace, digest, sizes, and the paths it skipped (FIFOs, sockets, devices).
nlohmann::json to_json(const snapshot_record& snapshot);
nlohmann::json to_json(const workspace_process& process);
// A terminal a workspace keeps, as workspace.terminals lists it.
nlohmann::json to_json(const terminal_listing& terminal);
// A signal by number (1-64) or name ("TERM", "SIGKILL", case-insensitive).
expected<int> signal_param(const nlohmann::json& value, const std::string& key);
nlohmann::json to_json(const tree_entry& entry, const std::string& mount_at);
// A file call's answer for its op: read's data (base64 when not UTF-8), list's entries,
// the entry that stat and every change leave, remove's {"removed": true}.
nlohmann::json to_json(const file_call& call, const file_reply& reply, const std::string& mount_at);
// One change: the entry's fields, "change" (added|modified|removed), "before" when modified.
nlohmann::json to_json(const tree_change& change, const std::string& mount_at);
// workspace.mark's {"mark"} and workspace.changes' {since, changes, truncated, scanned}.
nlohmann::json to_json(const changes_reply& reply, const std::string& mount_at);

// "/work" + "/" + a path relative to the workspace root ("." is the root itself).
std::string jail_path(const std::string& relative, const std::string& mount_at);

} // namespace corral
