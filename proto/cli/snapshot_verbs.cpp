// corral workspace snapshot | snapshots | snapshot-rm: a workspace's files archived (with
// their digest) in the daemon, to start new workspaces from (`create --from-snapshot`).
#include <iomanip>
#include <iostream>

#include "proto/cli/workspace_verbs.hpp"

namespace corral::cli {

using nlohmann::json;

int snapshot_verb(const ws_args& a) {
  if (a.rest.size() != 1) return usage_error("snapshot takes one workspace (its id or name)");
  return call_and_show(a, "workspace.snapshot", json{{"workspace", a.rest[0]}}, [](const json& s) {
    std::cout << s.value("snapshot", "") << "\n";
    for (auto& skipped : s.value("skipped", json::array()))
      std::cerr << "corral workspace: not kept (not a file, directory or symlink): " << skipped.value("path", "?") << "\n";
  });
}

int snapshots_verb(const ws_args& a) {
  if (!a.rest.empty()) return usage_error("snapshots takes no arguments");
  return call_and_show(a, "snapshot.list", json::object(), [](const json& r) {
    std::cout << std::left << std::setw(16) << "ID" << std::setw(24) << "WORKSPACE" << std::setw(13) << "BYTES"
              << std::setw(9) << "ENTRIES" << "TAKEN\n";
    for (auto& s : r.at("snapshots")) {
      auto from = s.value("workspace_name", "");
      std::cout << std::setw(16) << s.value("snapshot", "") << std::setw(24) << (from.empty() ? s.value("workspace", "") : from)
                << std::setw(13) << s.value("bytes", std::uint64_t{0}) << std::setw(9)
                << s.value("entries", std::uint64_t{0}) << time_text(s.value("created_at", std::int64_t{0})) << "\n";
    }
  });
}

int snapshot_rm_verb(const ws_args& a) {
  if (a.rest.size() != 1) return usage_error("snapshot-rm takes one snapshot id");
  return call_and_show(a, "snapshot.remove", json{{"snapshot", a.rest[0]}},
                       [](const json& s) { std::cout << "removed " << s.value("snapshot", "") << "\n"; });
}

} // namespace corral::cli
