// A tier turns a launch request and the profile into a launch plan for the exec helper,
// and says honestly what it enforces on this machine.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/failure.hpp"
#include "config/profile.hpp"
#include "tiers/jail/jail_spec.hpp"

namespace corral {

// Which limits a tier actually enforces here (measured, not assumed).
struct tier_capabilities {
  bool timeout = false;
  bool memory = false;
  bool pids = false;
  bool cpu = false;
  bool network_isolation = false;
  bool filesystem_read_isolation = false;
  bool filesystem_write_isolation = false;
  bool environment_isolation = false;
};

struct tier_status {
  bool available = false;
  std::string reason;  // why not, and what to do
};

// A workspace's holder init (actors/workspaces/workspace_holder.hpp), by host pid and start
// time: what a step entering the workspace joins.
struct holder_ref {
  std::int64_t pid = 0;
  std::uint64_t start_time = 0;
  bool held() const { return pid > 0 && start_time > 0; }
};

// One step of an execution, ready to launch: argv and env are final.
struct launch_request {
  std::vector<std::string> argv;  // argv[0] is resolved by the tier
  std::map<std::string, std::string> env;
  std::string scratch_dir;  // per execution, host path; the working directory
  // Where the scratch dir appears too, writable, besides /work (a workspace's home: the
  // holder's view; steps entering it see it there). Empty: nowhere else.
  std::string home;
  limits effective;         // the profile's limits tightened by the request
  std::string caller_path;  // the caller's PATH, to resolve a bare program name
  bool controlling_tty = false;
  // A language step whose source file lies in the scratch dir starts there, whatever the
  // profile's working directory (--cwd, --here).
  bool start_in_scratch = false;
  // In a workspace with a holder (lease_grant::enter): the step's background processes stay
  // in the workspace when it exits, instead of ending with it.
  bool leave_running = false;
  // Where to start instead of the working directory: absolute inside the boundary, or
  // relative to its working directory (start_dir).
  std::string cwd;
};

// The directory a step starts in: `working_dir` (the boundary's, as it sees it), or the
// request's cwd (absolute, or relative to `working_dir`).
std::string start_dir(const launch_request& request, const std::string& working_dir);

// What the lease granted: where the child must place itself before exec.
struct lease_grant {
  std::vector<std::string> cgroup_procs;
  // The lease's cgroups' path below each hierarchy's mount (the same in all), for a
  // runtime that makes its own cgroups inside them; empty when the lease has none.
  std::string cgroup_path;
  // A workspace's share: the step enters its holder (jail_mode::enter) instead of building
  // a jail of its own.
  holder_ref enter;
};

struct launch_plan {
  jail_spec spec;
  std::vector<std::string> not_enforced;  // limits asked for that this tier cannot hold
  std::string isolation;                  // a one-line description of what applied
  std::vector<std::string> masked;        // protected paths covered in the view, and how
};

class tier {
public:
  virtual ~tier() = default;
  virtual std::string name() const = 0;
  // Bounded: a tier whose runtime hangs is reported unavailable, not waited for.
  virtual tier_status available() const = 0;
  virtual tier_capabilities capabilities() const = 0;
  // True when executions need a cgroup lease (limits, kill-all) rather than the
  // helper's process-tree cleanup alone.
  virtual bool needs_cgroup_lease() const { return false; }
  // True when a jail can be armed before its request (actors/warm/warm_pool.hpp): the whole
  // boundary comes from the profile, and only program, argv, env and cwd from the request.
  virtual bool supports_warm_jails() const { return false; }
  // True when the exec helper has nothing left to do once it reports `exited` (no cleanup
  // commands, every process of the execution reaped): the result need not wait for the
  // helper's own exit, which for a jail includes the namespaces' teardown.
  virtual bool helper_exits_with_program() const { return false; }
  // True when the tier's runtime creates its own cgroups below the lease's (in every
  // hierarchy), so the lease must own those too.
  virtual bool nests_cgroups() const { return false; }
  // True when the tier's view covers the profile's masks (profile.hpp) and can start the
  // program in its working directory; a tier that cannot must not run such a profile.
  virtual bool builds_masked_view() const { return false; }
  // True when the tier can hold network_mode::allowlist (the egress proxy as the jail's
  // only door); the planner refuses an allowlist profile on every other tier.
  virtual bool enforces_network_allowlist() const { return false; }
  virtual expected<launch_plan> plan(const launch_request& request, const lease_grant& grant) const = 0;
};

// Resolves a bare program name against `search_path` (the caller's PATH, taken before the
// environment is cleared). Names with a slash are returned as they are.
expected<std::string> resolve_program(const std::string& name, const std::string& search_path);

// "KEY=value" strings for execve, after checking keys and values.
std::vector<std::string> to_envp(const std::map<std::string, std::string>& env);

} // namespace corral
