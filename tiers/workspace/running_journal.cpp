#include "tiers/workspace/running_journal.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

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

running_journal::~running_journal() {
  if (fd_ >= 0) ::close(fd_);
}

status running_journal::write(const std::vector<running_item>& items) {
  auto path = path_in(dir_);
  auto fail = [&](const char* what) {
    return make_failure(failure_kind::internal, std::string(what) + " " + path + ": " + std::strerror(errno));
  };
  if (fd_ < 0) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) return fail("opening");
    length_ = 0;
    if (::ftruncate(fd_, 0) < 0) return fail("truncating");
  }
  if (items.empty()) {
    if (length_ > 0 && ::ftruncate(fd_, 0) < 0) return fail("truncating");
    length_ = 0;
    return ok();
  }
  auto text = running_json(items);
  if (text.size() < length_) text.append(length_ - text.size(), ' ');
  if (::pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) return fail("writing");
  length_ = text.size();
  return ok();
}

status clear_running(const std::string& dir) {
  auto path = path_in(dir);
  if (::unlink(path.c_str()) < 0 && errno != ENOENT)
    return make_failure(failure_kind::internal, "removing " + path + ": " + std::strerror(errno));
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
  // Empty, or blanked: nothing ran when the runtime went.
  if (text.str().find_first_not_of(" \n") == std::string::npos) {
    ::unlink(path.c_str());
    return std::vector<running_item>{};
  }
  auto items = parse_running(text.str());
  if (!items) return make_failure(items.error().kind, path + ": " + items.error().message);
  ::unlink(path.c_str());
  return items;
}

} // namespace corral
