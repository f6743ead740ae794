#include "tiers/workspace/workspace_processes.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "tiers/jail/process_start.hpp"

namespace corral {

namespace {

constexpr std::size_t kMaxCommand = 4096;

std::string read_file(const std::string& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string out(limit, '\0');
  in.read(out.data(), static_cast<std::streamsize>(limit));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

// Boot time in unix seconds (btime in /proc/stat), for start times in clock ticks.
std::int64_t boot_time() {
  std::ifstream in("/proc/stat");
  std::string key;
  std::int64_t value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value) return value;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

// The holder's own level: its pid namespace is the one a process is "in the workspace" at.
std::size_t workspace_depth(pid_t holder_init) { return namespace_pids(holder_init).size(); }

bool in_workspace(const std::vector<int>& levels, std::size_t depth) {
  return depth > 0 && levels.size() == depth && levels.back() != 1;
}

// A zombie has ended: its parent (the holder's init, for what steps left) reaps it within
// moments, and a signal to it would be reported sent while it reaches nobody.
bool ended(const std::string& stat) {
  auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z' || stat[close + 2] == 'X';
}

} // namespace

std::vector<int> namespace_pids(pid_t host_pid) {
  std::istringstream status(read_file("/proc/" + std::to_string(host_pid) + "/status", 8192));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    std::vector<int> out;
    int pid;
    while (fields >> pid) out.push_back(pid);
    return out;
  }
  return {};
}

std::vector<workspace_process> list_workspace_processes(const std::vector<int>& cgroup_pids, pid_t holder_init) {
  std::vector<workspace_process> out;
  auto depth = workspace_depth(holder_init);
  auto booted = boot_time();
  auto hz = std::max(1L, ::sysconf(_SC_CLK_TCK));
  for (int host : cgroup_pids) {
    auto levels = namespace_pids(host);
    if (!in_workspace(levels, depth)) continue;
    auto stat = read_file("/proc/" + std::to_string(host) + "/stat", 1024);
    auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 4 > stat.size() || ended(stat)) continue;
    std::string comm = stat.substr(open + 1, close - open - 1);
    if (comm == "corral-exec") continue;  // a step's supervisor, not a program of the workspace
    workspace_process p;
    p.pid = levels.back();
    p.state = stat[close + 2];
    int host_ppid = std::atoi(stat.c_str() + close + 4);
    auto parent_levels = namespace_pids(host_ppid);
    p.ppid = parent_levels.size() == depth ? parent_levels.back() : 0;
    auto cmdline = read_file("/proc/" + std::to_string(host) + "/cmdline", kMaxCommand);
    while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    p.command = cmdline.empty() ? "[" + comm + "]" : cmdline;
    if (auto ticks = process_start_time(host)) p.started_at = booted + static_cast<std::int64_t>(*ticks) / hz;
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.pid < b.pid; });
  return out;
}

std::optional<pid_t> host_pid_of(const std::vector<int>& cgroup_pids, pid_t holder_init, int inside_pid) {
  if (inside_pid <= 1) return std::nullopt;  // never the holder's init
  auto depth = workspace_depth(holder_init);
  for (int host : cgroup_pids) {
    auto levels = namespace_pids(host);
    if (in_workspace(levels, depth) && levels.back() == inside_pid)
      return ended(read_file("/proc/" + std::to_string(host) + "/stat", 1024)) ? std::nullopt : std::optional<pid_t>(host);
  }
  return std::nullopt;
}

} // namespace corral
