#include "tiers/state_dir/lease_record.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "config/replace_file.hpp"
#include "tiers/cgroups/cgroup_set.hpp"
#include "tiers/state_dir/instance_claim.hpp"

namespace corral {

namespace {

const std::string kHeader = "corral-lease " + std::to_string(kLeaseRecordVersion);
const std::string kOwnerPrefix = "owner ";

// A process is named by its pid and its start time (field 22 of /proc/<pid>/stat), so a
// reused pid is not mistaken for the runtime that wrote a record.
std::string process_start_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) return field;
  return "";
}

// True when the record's owner line names a runtime that is still running: its leases
// are live, not leftovers, whoever else shares the state dir.
bool owner_alive(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, kOwnerPrefix.size(), kOwnerPrefix) != 0) continue;
    std::istringstream words(line.substr(kOwnerPrefix.size()));
    long pid = 0;
    std::string start;
    if (!(words >> pid >> start) || pid <= 0) return false;
    return process_start_time(static_cast<pid_t>(pid)) == start;
  }
  return false;
}
const std::string kSuffix = ".lease";
const std::string kTempSuffix = ".lease.tmp";
// A temp record lives for microseconds while its writer runs; only one this old is a
// crashed writer's. Younger ones may be a live peer's, mid-write, sharing the state dir.
constexpr std::chrono::seconds kTempMinAge{60};
constexpr off_t kMaxRecordBytes = 64 * 1024;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

failure os_failure(const std::string& what) {
  return make_failure(failure_kind::internal, what + ": " + std::strerror(errno));
}

// Kills until the cgroups are empty; false if they are not within the bound.
bool empty_cgroups(const cgroup_set& set, std::chrono::milliseconds bound, int& killed) {
  auto until = std::chrono::steady_clock::now() + bound;
  for (;;) {
    if (set.empty()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    killed += static_cast<int>(set.pids().size());
    set.kill_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

} // namespace

std::string lease_record_path(const std::string& leases_dir, const std::string& exec_id) {
  return leases_dir + "/" + exec_id + kSuffix;
}

status write_lease_record(const std::string& leases_dir, const std::string& exec_id,
                          const std::vector<std::string>& cgroup_dirs) {
  if (!valid_exec_id(exec_id))
    return make_failure(failure_kind::internal, "exec id \"" + exec_id + "\" cannot name a lease record");
  std::string body = kHeader + "\n";
  body += kOwnerPrefix + std::to_string(::getpid()) + " " + process_start_time(::getpid()) + "\n";
  for (const auto& d : cgroup_dirs) {
    if (d.find('\n') != std::string::npos)
      return make_failure(failure_kind::internal, "cgroup dir with a newline: " + d);
    body += d + "\n";
  }
  std::string path = lease_record_path(leases_dir, exec_id);
  // The writer's pid in the temp name and O_EXCL: no two writers ever share a temp file.
  std::string temp = leases_dir + "/" + exec_id + "." + std::to_string(::getpid()) + kTempSuffix;
  // No fsync: a record guards against a crash of the runtime, which the page cache
  // survives. After a crash of the machine no cgroup is left for it to name, and a record
  // torn by one is empty, which the sweep drops. (fsync on ext4 cost 3-7 ms a lease.)
  if (!replace_file(path, temp, body, false)) return os_failure("write lease record " + path);
  return ok();
}

expected<std::vector<std::string>> read_lease_record(const std::string& path) {
  auto name = path.substr(path.rfind('/') + 1);
  if (!ends_with(name, kSuffix))
    return make_failure(failure_kind::internal, "not a lease record name: " + path);
  std::string exec_id = name.substr(0, name.size() - kSuffix.size());

  // A record is trusted only if it is ours: a regular file of our user, not a symlink.
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return os_failure("open lease record " + path);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || st.st_size > kMaxRecordBytes) {
    ::close(fd);
    return make_failure(failure_kind::refused, "lease record " + path +
                                                   " is not a small regular file owned by this user; left alone");
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  ssize_t n = ::read(fd, text.data(), text.size());
  ::close(fd);
  if (n < 0) return os_failure("read lease record " + path);
  text.resize(static_cast<std::size_t>(n));

  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kHeader)
    return make_failure(failure_kind::refused, "lease record " + path + " does not start with \"" + kHeader + "\"");
  auto mounts = read_cgroup_mounts();
  std::vector<std::string> dirs;
  while (std::getline(in, line)) {
    if (line.empty() || line.compare(0, kOwnerPrefix.size(), kOwnerPrefix) == 0) continue;
    if (!is_lease_cgroup_dir(mounts, line, exec_id))
      return make_failure(failure_kind::refused, "lease record " + path + " names " + line +
                                                     ", which is not a corral/" + exec_id +
                                                     " cgroup under a cgroup mount; left alone");
    dirs.push_back(line);
  }
  return dirs;
}

status remove_lease_record(const std::string& leases_dir, const std::string& exec_id) {
  std::string path = lease_record_path(leases_dir, exec_id);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return os_failure("remove lease record " + path);
  return ok();
}

sweep_summary sweep_leases(const std::string& leases_dir, const sweep_options& options) {
  sweep_summary sum;
  std::vector<std::string> recorded_ids;
  for (const auto& name : dir_entries(leases_dir)) {
    std::string path = leases_dir + "/" + name;
    if (ends_with(name, kTempSuffix)) {
      // Written before any cgroup was made: it names nothing that exists. Only an old one
      // is removed: a young one may be another runtime's record being written right now.
      struct stat st {};
      if (::lstat(path.c_str(), &st) == 0 &&
          std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(st.st_mtime) >= kTempMinAge)
        ::unlink(path.c_str());
      continue;
    }
    if (!ends_with(name, kSuffix)) continue;
    ++sum.records;
    std::string exec_id = name.substr(0, name.size() - kSuffix.size());
    recorded_ids.push_back(exec_id);
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
      ::unlink(path.c_str());  // torn by a machine crash: it names nothing
      ++sum.swept;
      continue;
    }
    {
      std::ifstream in(path);
      std::string text((std::istreambuf_iterator<char>(in)), {});
      if (owner_alive(text)) {
        ++sum.live;
        continue;
      }
    }
    auto dirs = read_lease_record(path);
    if (!dirs) {
      if (dirs.error().kind == failure_kind::refused) ++sum.refused;
      sum.errors.push_back(dirs.error().message);
      continue;
    }
    auto set = cgroup_set::adopt(*dirs);
    if (!empty_cgroups(set, options.kill_bound, sum.killed)) {
      sum.errors.push_back("lease " + exec_id + ": processes survived SIGKILL for " +
                           std::to_string(options.kill_bound.count()) + " ms; record kept for the next sweep");
      continue;
    }
    if (auto s = set.remove(); !s) {
      sum.errors.push_back("lease " + exec_id + ": " + s.error().message);
      continue;
    }
    if (auto s = remove_lease_record(leases_dir, exec_id); !s) {
      sum.errors.push_back(s.error().message);
      continue;
    }
    ++sum.swept;
  }

  auto now = std::chrono::system_clock::now();
  auto mounts = options.orphan_parents.empty() ? std::vector<cgroup_mount>{} : read_cgroup_mounts();
  for (const auto& parent : options.orphan_parents) {
    for (const auto& id : dir_entries(parent)) {
      std::string dir = parent + "/" + id;
      struct stat st {};
      if (!is_lease_cgroup_dir(mounts, dir, id) || ::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      bool recorded = std::find(recorded_ids.begin(), recorded_ids.end(), id) != recorded_ids.end();
      auto age = now - std::chrono::system_clock::from_time_t(st.st_mtime);
      if (recorded || age < options.orphan_min_age) continue;
      // rmdir refuses a cgroup with processes or children: only empty leftovers go.
      if (::rmdir(dir.c_str()) == 0) ++sum.orphans_removed;
    }
  }
  return sum;
}

} // namespace corral
