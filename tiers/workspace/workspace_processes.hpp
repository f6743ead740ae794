// The processes of a workspace, read from the host's /proc: the members of its cgroup that
// live in its pid namespace (the holder's init's), named by their pid there, which is the
// pid a program inside sees and what `ps` and `kill` take.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace corral {

struct workspace_process {
  int pid = 0;   // inside the workspace
  int ppid = 0;  // inside the workspace (1: reparented to the holder's init)
  std::string command;    // its argv joined by spaces (at most 4 KiB), or [comm]
  char state = '?';       // R, S, D, T, Z… as in /proc/<pid>/stat
  std::int64_t started_at = 0;  // unix seconds
};

// The pid namespace a host pid lives in, as its pid at each level (NSpid in
// /proc/<pid>/status, outermost first); empty when the process is gone.
std::vector<int> namespace_pids(pid_t host_pid);

// Every member of `cgroup_pids` that lives in the holder's pid namespace, except its init,
// the steps' own supervisors (corral-exec) and zombies; sorted by pid.
std::vector<workspace_process> list_workspace_processes(const std::vector<int>& cgroup_pids, pid_t holder_init);

// The host pid of the workspace's process `inside_pid` among `cgroup_pids`, if it is one.
std::optional<pid_t> host_pid_of(const std::vector<int>& cgroup_pids, pid_t holder_init, int inside_pid);

} // namespace corral
