// What ran in a workspace, kept on disk beside its record (<dir>/running.json) while the
// runtime serves it: the executions and sessions borrowing it, the terminals it keeps and
// the background processes last seen in it. Everything in a workspace dies with the runtime
// that served it (its cgroup is swept at the next start), so a runtime that adopts a
// workspace and finds this file reports its entries as lost rather than pretending nothing
// ran. Not synced: it only has to survive the runtime's death, not the machine's.
#pragma once

#include <cstdint>
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

// <dir>/running.json replaced by `items` (atomically); removed when there are none.
status write_running(const std::string& dir, const std::vector<running_item>& items);
// What <dir>/running.json lists, and the file removed; none when there is no file. A file
// that cannot be read is an error, and is left for the operator to look at.
expected<std::vector<running_item>> take_running(const std::string& dir);

} // namespace corral
