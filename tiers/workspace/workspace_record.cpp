#include "tiers/workspace/workspace_record.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "config/replace_file.hpp"

namespace corral {

using nlohmann::json;

std::string record_json(const workspace_record& r) {
  json j = {{"version", kWorkspaceRecordVersion},
            {"id", r.id},
            {"name", r.name},
            {"owner", r.owner},
            {"created_at", r.created_at},
            {"ends_at", r.ends_at},
            {"idle_timeout_ms", r.idle_timeout_ms},
            {"keep_files", r.keep_files},
            {"paused", r.paused},
            {"ended", r.ended}};
  if (r.memory_bytes) j["memory_bytes"] = *r.memory_bytes;
  if (r.pids) j["pids"] = *r.pids;
  if (r.cpu_cores) j["cpu_cores"] = *r.cpu_cores;
  if (!r.from_snapshot.empty()) j["from_snapshot"] = r.from_snapshot;
  if (!r.home.empty()) j["home"] = r.home;
  if (!r.lost.empty()) {
    json lost = json::array();
    for (auto& i : r.lost) lost.push_back(to_json(i));
    j["lost"] = std::move(lost);
    j["lost_at"] = r.lost_at;
  }
  return j.dump(2) + "\n";
}

expected<workspace_record> parse_record(std::string_view text) {
  auto bad = [](const std::string& why) { return make_failure(failure_kind::internal, "workspace record: " + why); };
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  try {
    if (j.value("version", 0) != kWorkspaceRecordVersion)
      return bad("version " + j.value("version", json(nullptr)).dump() + " is not " +
                 std::to_string(kWorkspaceRecordVersion) + " (written by another corral)");
    workspace_record r;
    r.id = j.at("id").get<std::string>();
    if (!valid_workspace_id(r.id)) return bad("id '" + r.id + "' is not one corral makes");
    r.name = j.value("name", std::string());
    if (!r.name.empty() && !valid_workspace_name(r.name)) return bad("name '" + r.name + "' is not valid");
    r.owner = j.at("owner").get<std::string>();
    r.created_at = j.at("created_at").get<std::int64_t>();
    r.ends_at = j.at("ends_at").get<std::int64_t>();
    r.idle_timeout_ms = j.at("idle_timeout_ms").get<std::int64_t>();
    r.keep_files = j.value("keep_files", false);
    r.paused = j.value("paused", false);
    r.from_snapshot = j.value("from_snapshot", std::string());
    r.home = j.value("home", std::string());
    r.ended = j.value("ended", false);
    if (j.contains("memory_bytes")) r.memory_bytes = j["memory_bytes"].get<std::uint64_t>();
    if (j.contains("pids")) r.pids = j["pids"].get<std::uint64_t>();
    if (j.contains("cpu_cores")) r.cpu_cores = j["cpu_cores"].get<double>();
    if (j.contains("lost"))
      for (auto& e : j["lost"]) r.lost.push_back(running_item_from(e));
    r.lost_at = j.value("lost_at", std::int64_t{0});
    return r;
  } catch (const json::exception& e) {
    return bad(e.what());
  }
}

status write_record(const std::string& dir, const workspace_record& r) {
  auto path = dir + "/record.json";
  // Synced: a workspace outlives a reboot, and its record is how it is found again.
  if (!replace_file(path, path + ".tmp." + std::to_string(::getpid()), record_json(r), true))
    return make_failure(failure_kind::internal, "writing " + path + ": " + std::strerror(errno));
  return ok();
}

expected<workspace_record> read_record(const std::string& dir) {
  auto path = dir + "/record.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_failure(failure_kind::internal, "open " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  auto r = parse_record(text.str());
  if (!r) return make_failure(r.error().kind, path + ": " + r.error().message);
  return r;
}

bool valid_workspace_name(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_or_digit(name[0])) return false;
  for (char c : name)
    if (!lower_or_digit(c) && c != '.' && c != '_' && c != '-') return false;
  // Names and ids share one namespace in every call: a name may not pass for an id.
  return !valid_workspace_id(name);
}

bool valid_random_id(std::string_view id, std::string_view prefix) {
  if (id.size() != prefix.size() + 12 || id.substr(0, prefix.size()) != prefix) return false;
  for (char c : id.substr(prefix.size()))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string new_random_id(std::string_view prefix) {
  std::random_device rd;
  std::uniform_int_distribution<int> hex(0, 15);
  std::string id(prefix);
  for (int i = 0; i < 12; ++i) id += "0123456789abcdef"[hex(rd)];
  return id;
}

bool valid_workspace_id(std::string_view id) { return valid_random_id(id, "w-"); }

std::string new_workspace_id() { return new_random_id("w-"); }

} // namespace corral
