#include "tiers/contained/enclosing_cgroup.hpp"

#include <fstream>
#include <sstream>

namespace corral {

namespace {

std::optional<std::string> first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<std::uint64_t> number_in(const std::string& path) {
  auto line = first_line(path);
  if (!line || line->empty() || *line == "max") return std::nullopt;
  try {
    std::size_t used = 0;
    auto v = std::stoull(*line, &used);
    // v1 writes "no limit" as a huge page-aligned number.
    if (v >= (1ull << 62)) return std::nullopt;
    return v;
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<double> cpus_in_v2(const std::string& path) {
  auto line = first_line(path);
  if (!line) return std::nullopt;
  std::istringstream in(*line);
  std::string quota;
  double period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  try {
    return std::stod(quota) / period;
  } catch (...) {
    return std::nullopt;
  }
}

template <class T>
void tighten(std::optional<T>& have, const std::optional<T>& seen) {
  if (seen && (!have || *seen < *have)) have = seen;
}

} // namespace

std::string enclosing_limits::describe() const {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (memory) add("memory " + std::to_string(*memory / (1024 * 1024)) + " MiB");
  if (pids) add("pids " + std::to_string(*pids));
  if (cpus) {
    std::ostringstream c;
    c << "cpu " << *cpus;
    add(c.str());
  }
  return out.empty() ? "none" : out;
}

enclosing_limits read_enclosing_limits(const std::string& sys_fs_cgroup, const std::string& proc_self_cgroup) {
  enclosing_limits out;
  std::ifstream in(proc_self_cgroup);
  std::string line, unified, memory_v1, pids_v1, cpu_v1;
  while (std::getline(in, line)) {
    // hierarchy-id:controllers:path
    auto a = line.find(':');
    auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) unified = path;
    std::stringstream list(controllers);
    for (std::string c; std::getline(list, c, ',');) {
      if (c == "memory") memory_v1 = path;
      if (c == "pids") pids_v1 = path;
      if (c == "cpu") cpu_v1 = path;
    }
  }
  if (!memory_v1.empty() || !pids_v1.empty() || !cpu_v1.empty()) {
    out.cgroup = memory_v1.empty() ? pids_v1 : memory_v1;
    if (!memory_v1.empty()) out.memory = number_in(sys_fs_cgroup + "/memory" + memory_v1 + "/memory.limit_in_bytes");
    if (!pids_v1.empty()) out.pids = number_in(sys_fs_cgroup + "/pids" + pids_v1 + "/pids.max");
    if (!cpu_v1.empty()) {
      auto quota = first_line(sys_fs_cgroup + "/cpu" + cpu_v1 + "/cpu.cfs_quota_us");
      auto period = number_in(sys_fs_cgroup + "/cpu" + cpu_v1 + "/cpu.cfs_period_us");
      if (quota && period && *period > 0 && quota->size() && (*quota)[0] != '-') out.cpus = std::stod(*quota) / *period;
    }
    return out;
  }
  if (unified.empty()) return out;
  out.cgroup = unified;
  // From the cgroup up to the root of what this namespace shows: a limit anywhere above
  // bounds it too.
  for (std::string path = unified;;) {
    std::string dir = sys_fs_cgroup + (path == "/" ? "" : path);
    tighten(out.memory, number_in(dir + "/memory.max"));
    tighten(out.pids, number_in(dir + "/pids.max"));
    tighten(out.cpus, cpus_in_v2(dir + "/cpu.max"));
    if (path == "/" || path.empty()) break;
    auto slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
  return out;
}

} // namespace corral
