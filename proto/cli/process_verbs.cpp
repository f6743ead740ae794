// corral workspace pause | resume | ps | kill | terminals: what runs in a workspace between
// commands (the background processes `exec --leave-running` left there, the terminals
// `corral shell --workspace` left running), frozen, listed, signalled.
#include <iomanip>
#include <iostream>

#include "proto/cli/workspace_verbs.hpp"

namespace corral::cli {

using nlohmann::json;

namespace {

int pause_or_resume(const ws_args& a, const char* verb, const char* method) {
  if (a.rest.size() != 1) return usage_error(std::string(verb) + " takes one workspace (its id or name)");
  return call_and_show(a, method, json{{"workspace", a.rest[0]}}, [](const json& w) {
    std::cout << w.value("workspace", "") << " " << w.value("phase", "") << "\n";
  });
}

} // namespace

int pause_verb(const ws_args& a) { return pause_or_resume(a, "pause", "workspace.pause"); }
int resume_verb(const ws_args& a) { return pause_or_resume(a, "resume", "workspace.resume"); }

int ps_verb(const ws_args& a) {
  if (a.rest.size() != 1) return usage_error("ps takes one workspace (its id or name)");
  return call_and_show(a, "workspace.ps", json{{"workspace", a.rest[0]}}, [](const json& r) {
    std::cout << std::right << std::setw(7) << "PID" << std::setw(7) << "PPID" << " S " << std::left << std::setw(17)
              << "STARTED" << "COMMAND\n";
    for (auto& p : r.at("processes"))
      std::cout << std::right << std::setw(7) << p.value("pid", 0) << std::setw(7) << p.value("ppid", 0) << " "
                << p.value("state", "?") << " " << std::left << std::setw(17)
                << time_text(p.value("started_at", std::int64_t{0})) << p.value("command", "") << "\n";
  });
}

int terminals_verb(const ws_args& a) {
  if (a.rest.size() != 1) return usage_error("terminals takes one workspace (its id or name)");
  return call_and_show(a, "workspace.terminals", json{{"workspace", a.rest[0]}}, [](const json& r) {
    std::cout << std::left << std::setw(8) << "TERMINAL" << std::setw(17) << "STARTED" << std::setw(9) << "VIEWERS"
              << std::setw(8) << "WRITER" << "COMMAND\n";
    for (auto& t : r.at("terminals")) {
      std::string command;
      for (auto& word : t.value("argv", json::array())) command += (command.empty() ? "" : " ") + word.get<std::string>();
      std::cout << std::left << std::setw(8) << t.value("terminal", "") << std::setw(17)
                << time_text(t.value("started_at", std::int64_t{0})) << std::setw(9) << t.value("viewers", 0)
                << std::setw(8) << (t.value("writer", false) ? "yes" : "no") << command << "\n";
    }
  });
}

int kill_verb(const ws_args& a) {
  // kill W PID [-s SIGNAL | -SIGNAL]
  json params{{"signal", "TERM"}};
  std::vector<std::string> plain;
  for (std::size_t i = 0; i < a.rest.size(); ++i) {
    const auto& v = a.rest[i];
    if (v == "-s" || v == "--signal") {
      if (i + 1 >= a.rest.size()) return usage_error(v + " needs a signal");
      params["signal"] = a.rest[++i];
    } else if (v.size() > 1 && v[0] == '-') {
      params["signal"] = v.substr(1);
    } else {
      plain.push_back(v);
    }
  }
  if (plain.size() != 2) return usage_error("kill takes a workspace and a pid (as `ps` lists it)");
  std::size_t used = 0;
  long long pid = 0;
  try {
    pid = std::stoll(plain[1], &used);
  } catch (...) {
    used = 0;
  }
  if (used != plain[1].size() || pid < 2) return usage_error("'" + plain[1] + "' is not a pid in the workspace");
  params["workspace"] = plain[0];
  params["pid"] = pid;
  if (auto& s = params["signal"]; s.is_string() && !s.get<std::string>().empty() &&
                                  s.get<std::string>().find_first_not_of("0123456789") == std::string::npos)
    s = std::stoi(s.get<std::string>());
  return call_and_show(a, "workspace.kill", params, [](const json&) {});
}

} // namespace corral::cli
