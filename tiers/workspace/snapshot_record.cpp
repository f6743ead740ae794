#include "tiers/workspace/snapshot_record.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "config/replace_file.hpp"
#include "tiers/workspace/workspace_record.hpp"

namespace corral {

using nlohmann::json;

std::string snapshot_json(const snapshot_record& r) {
  json j = {{"version", kSnapshotRecordVersion}, {"id", r.id},
            {"owner", r.owner},                  {"source", r.source},
            {"source_name", r.source_name},      {"created_at", r.created_at},
            {"digest", r.digest},                {"bytes", r.bytes},
            {"entries", r.entries},              {"content_bytes", r.content_bytes},
            {"skipped", r.skipped}};
  return j.dump(2) + "\n";
}

expected<snapshot_record> parse_snapshot(std::string_view text) {
  auto bad = [](const std::string& why) { return make_failure(failure_kind::internal, "snapshot record: " + why); };
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  try {
    if (j.value("version", 0) != kSnapshotRecordVersion)
      return bad("version " + j.value("version", json(nullptr)).dump() + " is not " +
                 std::to_string(kSnapshotRecordVersion) + " (written by another corral)");
    snapshot_record r;
    r.id = j.at("id").get<std::string>();
    if (!valid_snapshot_id(r.id)) return bad("id '" + r.id + "' is not one corral makes");
    r.owner = j.at("owner").get<std::string>();
    r.source = j.at("source").get<std::string>();
    r.source_name = j.value("source_name", std::string());
    r.created_at = j.at("created_at").get<std::int64_t>();
    r.digest = j.at("digest").get<std::string>();
    if (r.digest.rfind("sha256:", 0) != 0 || r.digest.size() != 7 + 64) return bad("digest '" + r.digest + "' is not sha256:<hex>");
    r.bytes = j.at("bytes").get<std::uint64_t>();
    r.entries = j.at("entries").get<std::uint64_t>();
    r.content_bytes = j.at("content_bytes").get<std::uint64_t>();
    r.skipped = j.value("skipped", std::vector<std::string>{});
    return r;
  } catch (const json::exception& e) {
    return bad(e.what());
  }
}

status write_snapshot_record(const std::string& dir, const snapshot_record& r) {
  auto path = dir + "/meta.json";
  if (!replace_file(path, path + ".tmp." + std::to_string(::getpid()), snapshot_json(r), true))
    return make_failure(failure_kind::internal, "writing " + path + ": " + std::strerror(errno));
  return ok();
}

expected<snapshot_record> read_snapshot_record(const std::string& dir) {
  auto path = dir + "/meta.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_failure(failure_kind::internal, "open " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  auto r = parse_snapshot(text.str());
  if (!r) return make_failure(r.error().kind, path + ": " + r.error().message);
  return r;
}

bool valid_snapshot_id(std::string_view id) { return valid_random_id(id, "s-"); }

std::string new_snapshot_id() { return new_random_id("s-"); }

} // namespace corral
