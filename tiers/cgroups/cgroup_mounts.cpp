#include "tiers/cgroups/cgroup_mounts.hpp"

#include <algorithm>
#include <sstream>

#include "tiers/cgroups/cgroup_files.hpp"

namespace corral {

using namespace cgroupfs;

namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      auto oct = s.substr(i + 1, 3);
      if (oct.size() == 3 && std::all_of(oct.begin(), oct.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out += static_cast<char>(std::stoi(oct, nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

} // namespace

const std::vector<std::string>& our_cgroup_controllers() {
  static const std::vector<std::string> v{"memory", "pids", "cpu", "cpuacct", "freezer"};
  return v;
}

std::vector<cgroup_mount> parse_cgroup_mounts(const std::string& mountinfo) {
  std::vector<cgroup_mount> out;
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    auto f = words(line);
    auto sep = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || sep == f.end() || f.end() - sep < 4) continue;
    const std::string& type = sep[1];
    if (type != "cgroup" && type != "cgroup2") continue;
    cgroup_mount m;
    m.root = unescape(f[3]);
    m.point = unescape(f[4]);
    m.v2 = type == "cgroup2";
    if (!m.v2) {
      std::istringstream opts(sep[3]);
      for (std::string o; std::getline(opts, o, ',');)
        if (contains(our_cgroup_controllers(), o)) m.controllers.push_back(o);
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<cgroup_mount> read_cgroup_mounts() {
  return parse_cgroup_mounts(read_small("/proc/self/mountinfo").value_or(""));
}

} // namespace corral
