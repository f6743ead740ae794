// The guest-side cgroup (v2) an execution runs in: memory.max, pids.max and cpu.max from
// the request, cgroup.kill to end everything the program left, memory.events to tell an
// OOM kill from any other SIGKILL. The VM's RAM bounds the whole guest; this cgroup bounds
// the program inside it, so the agent itself survives the program's OOM to report it.
#pragma once

#include <string>

#include "config/failure.hpp"
#include "tiers/microvm/guest_protocol.hpp"

namespace corral {

class guest_cgroup {
public:
  // A default-constructed one is no cgroup: nothing to join, kill or read.
  static expected<guest_cgroup> create(const std::string& root, const guest_request& request);
  const std::string& procs_file() const { return procs_; }
  void kill_all() const;            // cgroup.kill: SIGKILL to every member, atomically
  void signal_all(int sig) const;   // each member of cgroup.procs
  long oom_kills() const;           // memory.events oom_kill

private:
  std::string dir_;
  std::string procs_;
};

} // namespace corral
