// The lease protocol: every lease (the host tier's process-group lease, the cgroup lease)
// accepts the same messages, so an execution does not care which one it holds.
//
//   (acquire_atom)                      -> lease_acquired   before the spawn: create and
//                                                           record the cgroup; say how to join it
//   (tighten_atom, limits)              -> lease_acquired   a warm jail's lease, acquired with the
//                                                           profile's limits, takes a request's
//                                                           tighter memory, pids and cpu limits
//   (attach_atom, process_id, long pid) -> (nothing)        the helper is running as `pid`
//   (terminate_atom)                    -> (nothing)        kill everything: SIGTERM, grace, SIGKILL
//   (report_atom)                       -> lease_report     the counters now, changing nothing
//                                                           (cgroup lease: the program's tree is gone)
//   (finish_atom)                       -> lease_report     the main child is gone: kill what is
//                                                           left, wait until empty, read counters,
//                                                           remove the cgroup and its record
// A workspace's cgroup lease also takes (cgroup_lease_config::workspace):
//   (freeze_atom, bool frozen)          -> lease_done       frozen (or thawed) once the kernel says
//                                                           so; a freeze not done within 5 s is
//                                                           undone and refused (a task in D state)
//   (pids_atom)                         -> std::vector<int> host pids of every member now
#pragma once

#include <chrono>

#include <caf/allowed_unsafe_message_type.hpp>

#include "actors/exec_result.hpp"
#include "config/failure.hpp"
#include "config/limits.hpp"
#include "tiers/tier.hpp"

namespace corral {

// How long a lease may take to answer acquire, tighten, report or finish; past it the lease
// is reported and abandoned.
inline constexpr std::chrono::seconds kLeaseBound{30};

struct lease_acquired {
  bool ok = false;
  failure error;
  lease_grant grant;
};

struct lease_done {
  bool ok = false;
  failure error;
};

struct lease_report {
  resource_usage usage;
  bool out_of_memory = false;   // the memory limit's OOM killer fired
  bool pids_limit_hit = false;  // a fork failed against pids.max
  std::uint64_t oom_kills = 0;      // the counts behind the two (cgroup_counters)
  std::uint64_t pids_refusals = 0;
  bool enforced_memory = false;
  bool enforced_pids = false;
  bool enforced_cpu = false;
};

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::limits)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::lease_acquired)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::lease_report)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::lease_done)
