#include "tiers/workspace/running_journal.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "config/replace_file.hpp"

namespace corral {

using nlohmann::json;

namespace {

constexpr int kJournalVersion = 1;

std::string path_in(const std::string& dir) { return dir + "/running.json"; }

} // namespace

json to_json(const running_item& i) {
  json j{{"kind", i.kind}, {"since", i.since}};
  if (!i.argv.empty()) j["argv"] = i.argv;
  if (!i.terminal.empty()) j["terminal"] = i.terminal;
  if (i.pid) j["pid"] = i.pid;
  if (!i.command.empty()) j["command"] = i.command;
  return j;
}

running_item running_item_from(const json& e) {
  running_item i;
  i.kind = e.at("kind").get<std::string>();
  i.since = e.value("since", std::int64_t{0});
  i.argv = e.value("argv", std::vector<std::string>{});
  i.terminal = e.value("terminal", std::string());
  i.pid = e.value("pid", std::int64_t{0});
  i.command = e.value("command", std::string());
  return i;
}

std::string running_json(const std::vector<running_item>& items) {
  json list = json::array();
  for (auto& i : items) list.push_back(to_json(i));
  return json{{"version", kJournalVersion}, {"running", std::move(list)}}.dump() + "\n";
}

expected<std::vector<running_item>> parse_running(std::string_view text) {
  auto bad = [](const std::string& why) { return make_failure(failure_kind::internal, "running journal: " + why); };
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (j.value("version", 0) != kJournalVersion) return bad("version " + j.value("version", json(nullptr)).dump() + " is unknown");
  std::vector<running_item> out;
  try {
    for (auto& e : j.at("running")) out.push_back(running_item_from(e));
  } catch (const json::exception& e) {
    return bad(e.what());
  }
  return out;
}

status write_running(const std::string& dir, const std::vector<running_item>& items) {
  auto path = path_in(dir);
  if (items.empty()) {
    if (::unlink(path.c_str()) < 0 && errno != ENOENT)
      return make_failure(failure_kind::internal, "removing " + path + ": " + std::strerror(errno));
    return ok();
  }
  if (!replace_file(path, path + ".tmp." + std::to_string(::getpid()), running_json(items), false))
    return make_failure(failure_kind::internal, "writing " + path + ": " + std::strerror(errno));
  return ok();
}

expected<std::vector<running_item>> take_running(const std::string& dir) {
  auto path = path_in(dir);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::vector<running_item>{};
    return make_failure(failure_kind::internal, "open " + path + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto items = parse_running(text.str());
  if (!items) return make_failure(items.error().kind, path + ": " + items.error().message);
  ::unlink(path.c_str());
  return items;
}

} // namespace corral
