// What ran in a workspace, kept on disk beside its record (<dir>/running.json) while the
// runtime serves it: the executions and sessions borrowing it, the terminals it keeps and
// the background processes last seen in it. Everything in a workspace dies with the runtime
// that served it (its cgroup is swept at the next start), so a runtime that adopts a
// workspace and finds this file reports its entries as lost rather than pretending nothing
// ran. Not synced: it only has to survive the runtime's death, not the machine's.
#pragma once

#include <cstdint>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/failure.hpp"

namespace corral {

struct running_item {
  std::string kind;               // "exec", "session", "terminal", "process"
  std::vector<std::string> argv;  // exec, session, terminal: what it ran
  std::string terminal;           // terminal: its id in the workspace ("t4")
  std::int64_t pid = 0;           // process: its pid inside the workspace
  std::string command;            // process: its command line as last seen
  std::int64_t since = 0;         // unix seconds: started (exec, session, terminal) or last seen (process)
};

// One item as JSON (the journal's entries, a record's `lost`, the wire's `lost`).
nlohmann::json to_json(const running_item& item);
// Throws nlohmann::json::exception on a malformed item.
running_item running_item_from(const nlohmann::json& j);

std::string running_json(const std::vector<running_item>& items);
expected<std::vector<running_item>> parse_running(std::string_view text);

// <dir>/running.json, written in place at every change of what runs: one pwrite of the
// whole list from offset 0, padded with spaces over a longer earlier one, so a runtime killed
// at any point leaves one whole list (a write is done or not done when a process dies).
// An empty list truncates the file. A rename per change cost 0.6 ms of each 3 ms exec.
class running_journal {
public:
  explicit running_journal(std::string dir) : dir_(std::move(dir)) {}
  running_journal(const running_journal&) = delete;
  running_journal& operator=(const running_journal&) = delete;
  ~running_journal();

  status write(const std::vector<running_item>& items);

private:
  std::string dir_;
  int fd_ = -1;
  std::size_t length_ = 0;  // what the file holds now, padding included
};

// Removes <dir>/running.json: the workspace ended on purpose, nothing in it is lost.
status clear_running(const std::string& dir);
// What <dir>/running.json lists, and the file removed; none when there is no file. A file
// that cannot be read is an error, and is left for the operator to look at.
expected<std::vector<running_item>> take_running(const std::string& dir);

} // namespace corral
