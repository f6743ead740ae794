// On-disk lease records: a cgroup lease writes `<leases_dir>/<exec_id>.lease` before its
// cgroups exist and removes it after they are gone, so a crashed runtime leaves a list of
// exactly what to kill and remove at the next start-up.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "config/failure.hpp"

namespace corral {

inline constexpr int kLeaseRecordVersion = 1;

std::string lease_record_path(const std::string& leases_dir, const std::string& exec_id);

// Atomic: a temp file renamed into place. Names the writing runtime (pid and start time:
// a sweep leaves the leases of a live runtime alone) and the cgroup dirs, one a line.
status write_lease_record(const std::string& leases_dir, const std::string& exec_id,
                          const std::vector<std::string>& cgroup_dirs);
// The dirs of a record, refused unless every one is `<cgroup mount>/.../corral/<exec_id>`
// for the id in the record's own name.
expected<std::vector<std::string>> read_lease_record(const std::string& path);
status remove_lease_record(const std::string& leases_dir, const std::string& exec_id);

struct sweep_options {
  // `<base>/corral` dirs (corral_parents()) whose record-less, empty children older than
  // `orphan_min_age` are removed: another runtime's live lease is never empty that long.
  std::vector<std::string> orphan_parents;
  // Only orphans older than this: a live lease creates its dir just after its record.
  std::chrono::seconds orphan_min_age{600};
  // How long one record's processes get to die under repeated SIGKILL.
  std::chrono::milliseconds kill_bound{5000};
};

struct sweep_summary {
  int records = 0;          // lease records found
  int swept = 0;            // records whose cgroups were emptied and removed, record deleted
  int refused = 0;          // records naming paths outside cgroupfs (left in place, untouched)
  int live = 0;             // records of a runtime still running (another process sharing the state dir)
  int killed = 0;           // processes signalled
  int orphans_removed = 0;  // record-less empty dirs removed
  std::vector<std::string> errors;
};

// For start-up: removes the leases of runtimes that are gone; those of a runtime still
// running (a daemon, while a CLI run starts with the same state dir) are counted as live.
sweep_summary sweep_leases(const std::string& leases_dir, const sweep_options& options = {});

} // namespace corral
