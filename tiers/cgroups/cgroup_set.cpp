#include "tiers/cgroups/cgroup_set.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <optional>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "tiers/cgroups/cgroup_files.hpp"

namespace corral {

using namespace cgroupfs;

namespace {

constexpr std::uint64_t kCpuPeriodUs = 100'000;
constexpr std::uint64_t kCpuMinQuotaUs = 1'000;  // the kernel refuses less

// v2's freezer: cgroup.freeze and "frozen 1" in cgroup.events; v1's: freezer.state.
struct freezer_files {
  std::string control, frozen_value, thawed_value;
};

std::optional<freezer_files> freezer_of(const std::string& dir) {
  if (exists(dir + "/freezer.state")) return freezer_files{dir + "/freezer.state", "FROZEN", "THAWED"};
  if (exists(dir + "/cgroup.freeze")) return freezer_files{dir + "/cgroup.freeze", "1", "0"};
  return std::nullopt;
}

bool is_frozen(const std::string& dir) {
  if (auto s = read_small(dir + "/freezer.state")) return s->rfind("FROZEN", 0) == 0;
  return keyed(dir + "/cgroup.events", "frozen").value_or(0) == 1;
}


// `dir` and every cgroup below it, parents first; nothing when it does not exist.
void add_subtree(const std::string& dir, std::vector<std::string>& out) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  out.push_back(dir);
  std::vector<std::string> children;
  while (auto* e = ::readdir(d))
    if (e->d_type == DT_DIR && std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      children.push_back(dir + "/" + e->d_name);
  ::closedir(d);
  for (const auto& c : children) add_subtree(c, out);
}

// The mount point `dir` lies below (the longest match), or empty.
std::string mount_of(const std::vector<cgroup_mount>& mounts, const std::string& dir) {
  std::string best;
  for (const auto& m : mounts)
    if (dir.compare(0, m.point.size() + 1, m.point + "/") == 0 && m.point.size() > best.size()) best = m.point;
  return best;
}

} // namespace

expected<cgroup_set> cgroup_set::plan(const cgroup_layout& layout, const std::string& exec_id, bool nested) {
  if (!valid_exec_id(exec_id))
    return make_failure(failure_kind::internal, "exec id \"" + exec_id + "\" cannot name a cgroup");
  cgroup_set s;
  if (layout.version == 2) {
    s.v2_root_ = layout.v2_root;
    s.dirs_.push_back(layout.v2_root + "/corral/" + exec_id);
  } else {
    for (const auto& h : layout.v1) s.dirs_.push_back(h.mount + "/corral/" + exec_id);
  }
  if (s.dirs_.empty()) return make_failure(failure_kind::tier_unavailable, "no cgroup hierarchy to create in");
  auto first_mount = mount_of(layout.mounts, s.dirs_.front());
  if (!first_mount.empty()) s.path_ = s.dirs_.front().substr(first_mount.size());
  for (const auto& d : s.dirs_)
    if (s.path_.empty() || mount_of(layout.mounts, d) + s.path_ != d) s.path_.clear();
  if (nested) {
    // A runtime given `path_` as its parent puts its cgroups at that path in every
    // hierarchy: the set must hold the same path everywhere to own what it makes.
    if (s.path_.empty())
      return make_failure(failure_kind::tier_unavailable,
                          "the execution's cgroups (" + s.dirs_.front() + ", ...) do not sit at one path below "
                          "every hierarchy's mount, so a container runtime cannot be placed inside them");
    s.nested_ = true;
    for (const auto& m : layout.mounts) {
      auto d = m.point + s.path_;
      if (!contains(s.dirs_, d) && !contains(s.companions_, d)) s.companions_.push_back(d);
    }
  }
  return s;
}

cgroup_set cgroup_set::adopt(std::vector<std::string> dirs) {
  cgroup_set s;
  s.dirs_ = std::move(dirs);
  s.nested_ = true;  // a record does not say; looking into children costs a sweep little
  return s;
}

std::vector<std::string> cgroup_set::recorded_dirs() const {
  auto out = dirs_;
  out.insert(out.end(), companions_.begin(), companions_.end());
  return out;
}

std::vector<std::string> cgroup_set::member_dirs() const {
  if (!nested_) return dirs_;
  std::vector<std::string> out;
  for (const auto& d : dirs_) add_subtree(d, out);
  for (const auto& d : companions_) add_subtree(d, out);
  return out;
}

namespace {

status make_dir(const std::string& dir, bool existing_ok) {
  if (::mkdir(dir.c_str(), 0755) == 0) return ok();
  int err = errno;
  if (err == EEXIST && existing_ok) return ok();
  if (err == EEXIST)
    return make_failure(failure_kind::internal, "cgroup " + dir + " already exists (an execution id was reused?)");
  return access_failure("mkdir " + dir, err);
}

// Turns on the controllers of ours that `dir` offers for its children.
status enable_controllers(const std::string& dir) {
  auto offered = words(read_small(dir + "/cgroup.controllers").value_or(""));
  auto enabled = words(read_small(dir + "/cgroup.subtree_control").value_or(""));
  for (const char* c : {"memory", "pids", "cpu"}) {
    if (!contains(offered, c) || contains(enabled, c)) continue;
    std::string file = dir + "/cgroup.subtree_control";
    if (int err = write_small(file, std::string("+") + c)) {
      if (err == EBUSY)
        return make_failure(failure_kind::tier_unavailable,
                            "write +" + std::string(c) + " to " + file +
                                ": busy (cgroup v2 allows no processes in a cgroup whose children have "
                                "controllers); delegate an empty subtree to corral");
      return access_failure("write +" + std::string(c) + " to " + file, err);
    }
  }
  return ok();
}

// The dir of the set whose `file` exists: which hierarchy holds a controller.
std::optional<std::string> dir_with(const std::vector<std::string>& dirs, const std::string& file) {
  for (const auto& d : dirs)
    if (exists(d + "/" + file)) return d;
  return std::nullopt;
}

failure missing_controller(const char* what, const std::vector<std::string>& dirs) {
  return make_failure(failure_kind::tier_unavailable,
                      std::string("a ") + what + " limit was asked for but no cgroup of this execution (" +
                          dirs.front() + (dirs.size() > 1 ? ", ..." : "") + ") has the " + what +
                          " controller; mount its v1 hierarchy or enable it in the delegated v2 subtree");
}

status check_limits(const limits& lim) {
  if (lim.memory_bytes && *lim.memory_bytes == 0)
    return make_failure(failure_kind::invalid_request, "memory limit must be above 0");
  if (lim.pids && *lim.pids == 0) return make_failure(failure_kind::invalid_request, "pids limit must be above 0");
  if (lim.cpu_cores && !(*lim.cpu_cores > 0))
    return make_failure(failure_kind::invalid_request, "cpu limit must be above 0 cores");
  return ok();
}

} // namespace

status cgroup_set::watch_oom(const std::string& dir) {
  // cgroup v1's OOM notification (cgroup.event_control): the eventfd counts each time
  // this cgroup, or a cgroup below it, runs out of memory.
  int efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (efd < 0) return make_failure(failure_kind::internal, std::string("eventfd: ") + std::strerror(errno));
  std::shared_ptr<const int> owned(new int(efd), [](const int* fd) {
    ::close(*fd);
    delete fd;
  });
  std::string control = dir + "/memory.oom_control";
  int ofd = ::open(control.c_str(), O_RDONLY | O_CLOEXEC);
  if (ofd < 0) return access_failure("open " + control, errno);
  int err = write_small(dir + "/cgroup.event_control", std::to_string(efd) + " " + std::to_string(ofd));
  ::close(ofd);  // the kernel holds its own reference once registered
  if (err) return access_failure("register an OOM eventfd in " + dir + "/cgroup.event_control", err);
  oom_events_ = std::move(owned);
  return ok();
}

status cgroup_set::create(const limits& lim, bool whole_group_oom) {
  whole_group_oom_ = whole_group_oom;
  if (auto s = check_limits(lim); !s) return s;
  enforced_ = {};
  std::vector<std::string> made;
  auto fail = [&](failure f) -> status {
    for (auto it = made.rbegin(); it != made.rend(); ++it) ::rmdir(it->c_str());
    enforced_ = {};
    return f;
  };

  for (const auto& dir : dirs_) {
    std::string parent = dir.substr(0, dir.rfind('/'));
    // The shared `corral` parent goes when its last execution is removed (see remove()):
    // one removed between making it and making `dir` below is made again.
    for (int attempt = 1;; ++attempt) {
      if (!v2_root_.empty())
        if (auto s = enable_controllers(v2_root_); !s) return fail(s.error());
      if (auto s = make_dir(parent, true); !s) return fail(s.error());
      if (!v2_root_.empty())
        if (auto s = enable_controllers(parent); !s) return fail(s.error());
      if (::mkdir(dir.c_str(), 0755) == 0) break;
      if (errno == ENOENT && attempt < 3) continue;
      if (auto s = make_dir(dir, false); !s) return fail(s.error());  // says why, with the errno
      break;
    }
    made.push_back(dir);
  }
  if (auto s = apply_limits(lim); !s) return fail(s.error());
  note_counter_files();
  return ok();
}

namespace {
const char* const kCounterFiles[] = {
    "memory.peak", "memory.max_usage_in_bytes", "memory.current", "cpu.stat", "cpuacct.usage_user",
    "cpuacct.usage_sys", "cpuacct.stat", "memory.events", "memory.oom_control", "memory.memsw.limit_in_bytes",
    "memory.memsw.max_usage_in_bytes", "memory.memsw.failcnt", "pids.events", "pids.peak", "pids.max"};
} // namespace

void cgroup_set::note_counter_files() {
  // One directory read per hierarchy: cheaper on the lease's way in than a probe per file.
  auto found = std::make_shared<std::set<std::string>>();
  for (const auto& d : dirs_) {
    DIR* dir = ::opendir(d.c_str());
    if (!dir) return;  // unreadable: read_counters probes each file instead
    while (auto* e = ::readdir(dir))
      for (const char* f : kCounterFiles)
        if (std::strcmp(e->d_name, f) == 0) found->insert(d + "/" + f);
    ::closedir(dir);
  }
  counter_files_ = std::move(found);
}

bool cgroup_set::has_counter_file(const std::string& path) const {
  return !counter_files_ || counter_files_->count(path) > 0;
}

status cgroup_set::tighten(const limits& lim) {
  if (auto s = check_limits(lim); !s) return s;
  return apply_limits(lim);
}

status cgroup_set::apply_limits(const limits& lim) {
  if (lim.memory_bytes) {
    std::string bytes = std::to_string(*lim.memory_bytes);
    if (auto d = dir_with(dirs_, "memory.max")) {
      if (auto s = write_limit(*d + "/memory.max", bytes); !s) return s;
      // Without this, swap would hold what the limit refuses.
      if (exists(*d + "/memory.swap.max"))
        if (auto s = write_limit(*d + "/memory.swap.max", "0"); !s) return s;
      // One OOM kill takes the whole execution, not a random member of it.
      if (whole_group_oom_ && exists(*d + "/memory.oom.group")) write_small(*d + "/memory.oom.group", "1");
    } else if (auto d = dir_with(dirs_, "memory.limit_in_bytes")) {
      if (auto s = write_limit(*d + "/memory.limit_in_bytes", bytes); !s) return s;
      // memsw caps memory plus swap (after limit_in_bytes: it may never be below it).
      if (exists(*d + "/memory.memsw.limit_in_bytes"))
        if (auto s = write_limit(*d + "/memory.memsw.limit_in_bytes", bytes); !s) return s;
      if (nested_ && !oom_events_)
        if (auto s = watch_oom(*d); !s) return s;
    } else {
      return missing_controller("memory", dirs_);
    }
    enforced_.memory = true;
  }

  if (lim.pids) {
    auto d = dir_with(dirs_, "pids.max");
    if (!d) return missing_controller("pids", dirs_);
    if (auto s = write_limit(*d + "/pids.max", std::to_string(*lim.pids)); !s) return s;
    enforced_.pids = true;
  }

  if (lim.cpu_cores) {
    auto quota = std::max<std::uint64_t>(kCpuMinQuotaUs, static_cast<std::uint64_t>(
                                                             std::llround(*lim.cpu_cores * kCpuPeriodUs)));
    if (auto d = dir_with(dirs_, "cpu.max")) {
      auto s = write_limit(*d + "/cpu.max", std::to_string(quota) + " " + std::to_string(kCpuPeriodUs));
      if (!s) return s;
    } else if (auto d = dir_with(dirs_, "cpu.cfs_quota_us")) {
      auto s = write_limit(*d + "/cpu.cfs_period_us", std::to_string(kCpuPeriodUs));
      if (s) s = write_limit(*d + "/cpu.cfs_quota_us", std::to_string(quota));
      if (!s) return s;
    } else {
      return missing_controller("cpu", dirs_);
    }
    enforced_.cpu = true;
  }
  return ok();
}


std::vector<std::string> cgroup_set::procs_files() const {
  std::vector<std::string> out;
  for (const auto& d : dirs_) out.push_back(d + "/cgroup.procs");
  return out;
}

std::vector<std::string> cgroup_set::join_files() const {
  std::vector<std::string> out;
  const char* file = v2_root_.empty() ? "/tasks" : "/cgroup.procs";
  for (const auto& d : dirs_) out.push_back(d + file);
  return out;
}

std::vector<pid_t> cgroup_set::pids() const {
  std::vector<pid_t> out;
  for (const auto& d : member_dirs()) {
    auto f = d + "/cgroup.procs";
    std::istringstream in(read_small(f).value_or(""));
    for (long pid; in >> pid;)
      if (pid > 0) out.push_back(static_cast<pid_t>(pid));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool cgroup_set::empty() const {
  // v2 keeps the answer in one line; v1 has to build the pid list of every hierarchy.
  if (!v2_root_.empty())
    if (auto populated = keyed(dirs_.front() + "/cgroup.events", "populated")) return *populated == 0;
  for (const auto& d : member_dirs()) {
    auto text = read_small(d + "/cgroup.procs");
    if (text && !words(*text).empty()) return false;
  }
  return true;
}

int cgroup_set::signal_all(int sig) const {
  int n = 0;
  const pid_t self = ::getpid();
  for (pid_t pid : pids())
    if (pid != self && ::kill(pid, sig) == 0) ++n;
  return n;
}

void cgroup_set::kill_all() const {
  bool killed = false;
  for (const auto& d : dirs_)
    if (exists(d + "/cgroup.kill")) killed = write_small(d + "/cgroup.kill", "1") == 0 || killed;
  if (killed) return;

  std::optional<std::string> frozen_dir;
  std::optional<freezer_files> fz;
  for (const auto& d : dirs_)
    if ((fz = freezer_of(d))) {
      frozen_dir = d;
      break;
    }
  if (fz && write_small(fz->control, fz->frozen_value) == 0) {
    // Freezing is asynchronous; once FROZEN no member is mid-fork, so the list is complete.
    // A short bound: a member stuck in the kernel must not stall the caller.
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
    while (!is_frozen(*frozen_dir) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    signal_all(SIGKILL);
    write_small(fz->control, fz->thawed_value);  // a pending SIGKILL acts on thaw
    return;
  }
  signal_all(SIGKILL);
}

bool cgroup_set::can_freeze() const {
  return std::any_of(dirs_.begin(), dirs_.end(), [](const std::string& d) { return freezer_of(d).has_value(); });
}

status cgroup_set::set_frozen(bool frozen) const {
  for (const auto& d : dirs_) {
    auto fz = freezer_of(d);
    if (!fz) continue;
    if (int err = write_small(fz->control, frozen ? fz->frozen_value : fz->thawed_value); err != 0)
      return make_failure(failure_kind::internal, "writing " + fz->control + ": " + std::strerror(err));
    return ok();
  }
  return make_failure(failure_kind::tier_unavailable, "no cgroup freezer here (v1 freezer hierarchy or v2 cgroup.freeze)");
}

bool cgroup_set::frozen() const {
  for (const auto& d : dirs_)
    if (freezer_of(d)) return is_frozen(d);
  return false;
}

bool cgroup_set::needs_peak_sampling() const {
  // From the files noted at create() when there are: no probe per call.
  auto any_has = [this](const char* file) {
    return std::any_of(dirs_.begin(), dirs_.end(), [&](const std::string& d) {
      return counter_files_ ? counter_files_->count(d + "/" + file) > 0 : exists(d + "/" + file);
    });
  };
  return !any_has("memory.peak") && !any_has("memory.max_usage_in_bytes") && any_has("memory.current");
}

void cgroup_set::sample_peak() {
  for (const auto& d : dirs_)
    if (auto v = number(d + "/memory.current")) sampled_peak_ = std::max(sampled_peak_, *v);
}

cgroup_counters cgroup_set::read_counters() const {
  cgroup_counters c;
  c.usage.peak_memory_bytes = sampled_peak_;
  // Only the files that exist are opened (has_counter_file).
  auto number_of = [this](const std::string& path) { return has_counter_file(path) ? number(path) : std::nullopt; };
  auto keyed_of = [this](const std::string& path, const std::string& key) {
    return has_counter_file(path) ? keyed(path, key) : std::nullopt;
  };
  for (const auto& d : dirs_) {
    for (const char* f : {"/memory.peak", "/memory.max_usage_in_bytes", "/memory.current"})
      if (auto v = number_of(d + f)) c.usage.peak_memory_bytes = std::max(c.usage.peak_memory_bytes, *v);

    if (auto user = keyed_of(d + "/cpu.stat", "user_usec")) {  // v2 (v1's cpu.stat has no usec keys)
      c.usage.cpu_user_us = *user;
      c.usage.cpu_system_us = keyed_of(d + "/cpu.stat", "system_usec").value_or(0);
    } else if (auto user_ns = number_of(d + "/cpuacct.usage_user")) {
      c.usage.cpu_user_us = *user_ns / 1000;
      c.usage.cpu_system_us = number_of(d + "/cpuacct.usage_sys").value_or(0) / 1000;
    } else if (auto ticks = keyed_of(d + "/cpuacct.stat", "user")) {
      auto hz = static_cast<std::uint64_t>(std::max(1L, ::sysconf(_SC_CLK_TCK)));
      c.usage.cpu_user_us = *ticks * 1'000'000 / hz;
      c.usage.cpu_system_us = keyed_of(d + "/cpuacct.stat", "system").value_or(0) * 1'000'000 / hz;
    }

    auto v2_kills = keyed_of(d + "/memory.events", "oom_kill").value_or(0);
    c.oom_kills += v2_kills;
    if (v2_kills > 0) c.out_of_memory = true;
    if (has_counter_file(d + "/memory.oom_control")) {
      if (auto kills = keyed_of(d + "/memory.oom_control", "oom_kill")) {
        c.oom_kills += *kills;
        if (*kills > 0) c.out_of_memory = true;
      } else {
        // Before 4.13 v1 counts no OOM kills. failcnt alone also counts reclaim, so only a
        // failed charge against a memory+swap limit that was reached stands for the killer.
        auto limit = number_of(d + "/memory.memsw.limit_in_bytes");
        auto peak = number_of(d + "/memory.memsw.max_usage_in_bytes");
        if (number_of(d + "/memory.memsw.failcnt").value_or(0) > 0 && limit && peak && *peak >= *limit)
          c.out_of_memory = true;
      }
    }
    auto refused_forks = keyed_of(d + "/pids.events", "max").value_or(0);
    c.pids_refusals += refused_forks;
    if (refused_forks > 0) c.pids_limit_hit = true;
    // A fork refused in a nested runtime's cgroup is counted there (pids.events is the
    // forking task's), and that cgroup is gone by now: the limit having been reached is
    // what is left to see. A program that used exactly its limit counts as hitting it.
    if (nested_) {
      auto peak = number_of(d + "/pids.peak");
      auto max = number_of(d + "/pids.max");
      if (peak && max && *peak >= *max) c.pids_limit_hit = true;
    }
  }
  if (oom_events_) {
    std::uint64_t n = 0;
    if (::read(*oom_events_, &n, sizeof n) == static_cast<ssize_t>(sizeof n) && n > 0) oom_seen_ = true;
    if (oom_seen_) c.out_of_memory = true;
  }
  return c;
}

status cgroup_set::remove() {
  std::optional<failure> first;
  // Children before parents: a nested runtime may have left its own (empty) cgroups.
  auto all = member_dirs();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (::rmdir(it->c_str()) == 0 || errno == ENOENT) continue;
    int err = errno;
    if (!first)
      first = make_failure(failure_kind::internal,
                           "rmdir " + *it + ": " + std::strerror(err) +
                               (err == EBUSY ? " (processes are still inside)" : ""));
  }
  if (first) return *first;
  // The `corral` parents, shared by every execution, go once empty: rmdir refuses one that
  // still holds another execution's cgroups, and create() makes it again when needed.
  // (runc makes them in the hierarchies a nested set does not limit, too.)
  std::set<std::string> parents;
  for (const auto& d : recorded_dirs()) {
    auto slash = d.rfind('/');
    if (slash != std::string::npos && slash >= 7 && d.compare(slash - 7, 7, "/corral") == 0)
      parents.insert(d.substr(0, slash));
  }
  for (const auto& p : parents) ::rmdir(p.c_str());
  return ok();
}

} // namespace corral
