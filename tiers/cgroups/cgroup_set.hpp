// One execution's cgroups, no actors: `<parent>/corral/<exec_id>` (one dir on v2, one per
// controller hierarchy on v1), their limits, the processes inside, their counters and
// their removal. The cgroup lease (actors/leases/cgroup_lease.hpp) is its only owner.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <sys/types.h>
#include <vector>

#include "config/failure.hpp"
#include "config/limits.hpp"
#include "tiers/cgroups/cgroup_layout.hpp"
#include "tiers/cgroups/resource_usage.hpp"

namespace corral {

struct cgroup_counters {
  resource_usage usage;
  bool out_of_memory = false;   // the OOM killer fired in the cgroup
  bool pids_limit_hit = false;  // a fork failed against pids.max (nested: pids.max was reached)
  // The kernel's counts behind the two flags, where it keeps them: a workspace's steps share
  // one cgroup, and a step's verdict is what the counts did while it ran.
  std::uint64_t oom_kills = 0;
  std::uint64_t pids_refusals = 0;
};

struct cgroup_enforced {
  bool memory = false;
  bool pids = false;
  bool cpu = false;
};

class cgroup_set {
public:
  // The dirs an execution will use, before anything exists, so the lease record can
  // name them before they are created. `nested`: a runtime (runc under podman) makes its
  // own cgroups below ours, in every mounted hierarchy, so the set also owns
  // `<mount>/corral/<exec_id>` in the hierarchies it does not use, and looks into
  // children when it lists, kills, counts and removes.
  static expected<cgroup_set> plan(const cgroup_layout& layout, const std::string& exec_id, bool nested = false);
  // Dirs read back from a lease record (the caller has checked them with is_lease_cgroup_dir).
  static cgroup_set adopt(std::vector<std::string> dirs);

  // Creates the dirs and writes the limits; on failure removes what it made. An OOM kill
  // takes the whole set (v2 memory.oom.group) unless `whole_group_oom` is false: a
  // workspace's set holds its holder, whose death would end every process in it.
  status create(const limits& lim, bool whole_group_oom = true);
  // Writes the limits that are set again, over what create wrote: a warm jail's cgroups,
  // made with the profile's limits, take a request's tighter ones (callers only tighten).
  status tighten(const limits& lim);

  const std::vector<std::string>& dirs() const { return dirs_; }
  // What the lease record must name: dirs() and, when nested, the other hierarchies' dirs.
  std::vector<std::string> recorded_dirs() const;
  // The set's path below each hierarchy's mount point ("/corral/<exec_id>" on v1), the
  // same in all: what a runtime is given as its cgroup parent. Empty for an adopted set.
  const std::string& path_below_mounts() const { return path_; }
  std::vector<std::string> procs_files() const;
  // The files a single-threaded process writes "0" into to move itself in before exec:
  // `tasks` on v1, whose write of the calling thread skips the global threadgroup lock and
  // with it an RCU grace period (8-20 ms here, against under 1 ms); cgroup.procs on v2.
  std::vector<std::string> join_files() const;
  const cgroup_enforced& enforced() const { return enforced_; }

  std::vector<pid_t> pids() const;  // union over all hierarchies
  bool empty() const;
  int signal_all(int sig) const;    // how many processes were signalled
  // SIGKILL without giving a fork bomb room to outrun the loop: cgroup.kill on v2 (5.14+),
  // else freeze, kill every member, thaw. Call until empty().
  void kill_all() const;

  // The freezer (v1 freezer.state, v2 cgroup.freeze): every member stops where it is, and
  // takes no CPU, until thawed. Freezing is asynchronous: frozen() says when it is done.
  bool can_freeze() const;
  status set_frozen(bool frozen) const;
  bool frozen() const;

  // v2 without memory.peak: remember the highest memory.current seen.
  bool needs_peak_sampling() const;
  void sample_peak();
  cgroup_counters read_counters() const;

  // rmdir every dir (an absent one is fine); fails while a dir still has processes.
  status remove();

private:
  status apply_limits(const limits& lim);
  // Every dir whose members belong to the execution: dirs(), and when nested the
  // companions and all their descendants, parents before children.
  std::vector<std::string> member_dirs() const;
  status watch_oom(const std::string& memory_dir);
  // Which of the counter files read_counters may read exist, probed once after create():
  // the result is read right after the program, and dozens of failed opens cost there.
  void note_counter_files();
  bool has_counter_file(const std::string& path) const;

  // Which dir does what is read from the files it has (memory.max, pids.max, ...), so a
  // planned set and one adopted from a record behave the same.
  std::vector<std::string> dirs_;
  std::vector<std::string> companions_;  // nested: the hierarchies' dirs we set no limits in
  bool nested_ = false;
  std::string path_;
  // nested on v1: the memory cgroup's OOM notification (an eventfd), because v1 counts an
  // OOM kill only in the victim's own cgroup, a child the runtime has removed by the end.
  std::shared_ptr<const int> oom_events_;
  mutable bool oom_seen_ = false;
  std::string v2_root_;  // set when planned on v2: its subtree_control needs controllers
  cgroup_enforced enforced_;
  bool whole_group_oom_ = true;
  std::uint64_t sampled_peak_ = 0;
  std::shared_ptr<const std::set<std::string>> counter_files_;  // unset: probe on each read
};

} // namespace corral
