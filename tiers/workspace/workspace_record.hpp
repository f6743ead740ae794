// A workspace's record on disk (<workspaces dir>/<id>/record.json): what it was created
// with and when it ends, so a restarted runtime finds it again with its files. Written
// whole to a temp file, synced and renamed over the old one: a crash leaves either record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/failure.hpp"
#include "tiers/workspace/running_journal.hpp"

namespace corral {

inline constexpr int kWorkspaceRecordVersion = 1;

struct workspace_record {
  std::string id;     // "w-" + 12 hex digits; also the directory's name
  std::string name;   // the owner's name for it; empty: none
  std::string owner;  // the principal that created it ("lib", "uid:1000")
  std::int64_t created_at = 0;  // unix seconds
  std::int64_t ends_at = 0;     // unix seconds: its lifetime's end
  std::int64_t idle_timeout_ms = 0;
  // What its executions may use at most (each still narrows further).
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> pids;
  std::optional<double> cpu_cores;
  std::string from_snapshot;  // the snapshot its files were restored from; "" if none
  std::string home;           // where its files also appear inside (workspace_options::home)
  bool keep_files = false;  // ending leaves the files (and the record, marked ended)
  bool ended = false;
  // Paused by its owner: its processes frozen, nothing new starts in it, its idle clock
  // stopped. Kept across a restart (the processes are lost; resume then frees it).
  bool paused = false;
  // What was running in it when the runtime serving it died (running_journal.hpp), found
  // by the runtime that adopted it next, at lost_at (unix seconds). Kept until it ends.
  std::vector<running_item> lost;
  std::int64_t lost_at = 0;
};

std::string record_json(const workspace_record& r);
// Refuses another version, a missing id and an id that is not one corral makes.
expected<workspace_record> parse_record(std::string_view text);

// <dir>/record.json, atomically.
status write_record(const std::string& dir, const workspace_record& r);
expected<workspace_record> read_record(const std::string& dir);

// [a-z0-9][a-z0-9._-]{0,62}: safe in paths, logs and URLs; no id can look like one.
bool valid_workspace_name(std::string_view name);
// A prefix and 12 lowercase hex digits from the system's random source: workspace ("w-")
// and snapshot ("s-") ids.
bool valid_random_id(std::string_view id, std::string_view prefix);
std::string new_random_id(std::string_view prefix);
// "w-" followed by 12 lowercase hex digits.
bool valid_workspace_id(std::string_view id);
std::string new_workspace_id();

} // namespace corral
