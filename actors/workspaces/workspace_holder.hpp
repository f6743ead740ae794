// A workspace's holder: the one actor that owns what runs in a workspace across its
// executions. It holds the workspace's cgroup lease (its budget: memory, pids and cpu for
// everything inside, and the freezer) and its holder jail (`corral-exec` in hold mode: the
// landlock boundary built once, whose init, pid 1 of the workspace, only reaps). Every
// execution, stdio session and terminal in the workspace enters that jail
// (tiers/exec_helper/workspace_enter.hpp) under a share of the lease
// (actors/leases/workspace_share_lease.hpp), so files, /tmp, loopback and background
// processes are shared while each step keeps its own verdict, timeout and output cap.
//
// Phases: idle (nothing armed) ─hold─▶ arming ─holding + armed─▶ held ─stop─▶ ending.
// The jail is armed at the first step, not at create, and re-armed after it is lost.
//
//   (hold_atom)              -> holder_ready      armed now or once arming ends (bounded)
//   (freeze_atom, bool)      -> lease_done        pause (true) or resume; ok when nothing is held
//   (pids_atom)              -> process_list      the workspace's processes (pid inside, command)
//   (signal_atom, int, int)  -> lease_done        a signal to one of them, by its pid inside
//   (stop_atom)              -> bool              kills everything inside, removes the cgroup
//
// Failure edges: the lease or the launch fails (every waiter hears why; the next hold tries
// again); arming takes longer than 30 s (killed, refused); the holder dies while held (a
// bug, or the OOM killer despite its score: everything in the workspace went with it; the
// lease is finished, the loss logged, and the next step arms a new holder, never silently
// restarting what ran). When the registry goes, the link ends this actor and the lease's
// own exit path kills and removes what is left.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include "config/failure.hpp"
#include "config/limits.hpp"
#include "tiers/tier.hpp"
#include "tiers/workspace/workspace_processes.hpp"

namespace corral {

class child_launcher;

// What the registry gives every holder it spawns (the runtime's launcher, the landlock tier).
struct holder_env {
  child_launcher* launcher = nullptr;
  std::shared_ptr<const tier> boundary;
  // Spawns the workspace's cgroup lease (cgroup_lease_config::workspace) for `id` and limits.
  std::function<caf::actor(const std::string& lease_id, const limits& budget)> make_budget;
  std::string instance;     // names the lease: <instance>-<workspace id>
  std::string caller_path;  // resolves the placeholder program the holder is planned with
};

struct holder_config {
  holder_env env;
  std::string workspace;  // its id
  std::string root;       // host path of its files: the jail's /work
  std::string home;       // where the jail shows them too (workspace_record::home); "": nowhere
  limits budget;
};

struct holder_ready {
  bool ok = false;
  failure error;
  lease_grant grant;  // the workspace's cgroup to join and the holder to enter
  caf::actor budget;  // the workspace's cgroup lease (its counters, for a step's verdict)
};

struct process_list {
  bool ok = false;
  failure error;
  std::vector<workspace_process> items;
};

caf::actor spawn_workspace_holder(caf::actor_system& sys, holder_config config);

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::holder_ready)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::process_list)
