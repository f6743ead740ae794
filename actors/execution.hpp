// One execution: the state machine that owns a request from admission to its one reply.
//
//   leasing ──acquired (or a warm jail taken and tightened)──▶ launching ──io_spawned──▶ running ──helper reaped + both EOFs──▶
//     (next step, for a compile step that succeeded) or finishing ──lease report──▶ done
//
// Failure edges: the lease cannot be acquired (reply the failure); the plan or the spawn
// fails (finish with spawn_failed); the timeout fires or the caller goes away (terminate
// through the lease, keep what was captured, finish); a descendant that escaped holds a
// pipe open after the helper exited (the streams are closed after a bound).
//
// Each step's child starts through the runtime's child_launcher (actors/launch/), cold or
// into the warm jail taken for it. Beside the phase, execution_state.hpp keeps the helper's
// state, the end's (result out, lease finishing), what ended it and the warm jail's part.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/leases/lease_request.hpp"
#include "config/limits.hpp"
#include "config/profile.hpp"
#include "tiers/jail/scratch_dir.hpp"
#include "tiers/tier.hpp"
#include "tiers/workspace/change_manifest.hpp"

namespace corral {

class child_launcher;

struct exec_step {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  bool compile = false;  // a failed compile ends the execution with compile_failed
  bool in_scratch = false;  // its source file is in the scratch dir: start there
};

struct execution_plan {
  std::string id;
  std::shared_ptr<const tier> boundary;
  std::vector<exec_step> steps;
  limits effective;
  std::optional<std::string> stdin_data;
  // The working directory (the jail's /work), host path: a workspace's files, or the
  // scratch dir once the execution has one.
  std::string work_dir;
  std::string cwd;  // exec_request::cwd: where its steps start, inside the boundary
  // Its scratch dir's owner once there is one: removed on the way out (the execution's
  // end, a session's end, or the queue's drain at stop). Null when the execution borrows a
  // workspace's files, which outlive it, and until it starts: a warm jail brings its own
  // dir, so the execution makes one only when it starts cold (make_scratch_dir).
  std::shared_ptr<scratch_dir_owner> scratch;
  std::string scratch_parent;  // where that dir is made
  // What goes into the scratch dir before the first step: file name -> content (a
  // language's source file).
  std::map<std::string, std::string> scratch_files;
  std::string workspace;  // the workspace it runs in (id); empty: none
  std::uint64_t workspace_loan = 0;  // its borrow of it, given back at its end
  // A workspace with a holder: each step enters it (its lease is a share of the
  // workspace's cgroup, asked of the holder actor); leave_running keeps its leftovers.
  caf::actor workspace_holder;
  bool leave_running = false;
  // exec_request::changes: the workspace's files as they were before it started; the
  // supervisor compares them with what is there at its end.
  std::shared_ptr<const std::vector<manifest_entry>> changes_before;
  std::string caller_path;
  std::vector<std::string> not_enforced;  // limits the request set that the tier cannot hold
  network_mode network = network_mode::none;
  egress_lists egress;                    // the effective lists in allowlist mode
  caf::actor live_output;                 // the request's subscriber, if any
};

// Sent to a live_output subscriber when its execution starts: the handle lets it cancel.
struct execution_started {
  std::string execution_id;
  caf::actor execution;
};

// Sent to a live_output subscriber when its execution must wait for a slot: `position` 1
// starts next (actors/fair_queue.hpp).
struct execution_queued {
  std::size_t position = 0;
  std::size_t queued_for_client = 0;  // this client's executions waiting, this one included
};

struct execution_env {
  child_launcher* launcher = nullptr;  // every step's child, cold or into a warm jail
  lease_factory make_lease;
  // Armed jails of this tier (actors/warm/warm_pool.hpp); none when null.
  caf::actor warm_pool;
  std::shared_ptr<const tier> warm_tier;
};

struct execution_state;

// Removes the plan's scratch dir now, if it has one; a workspace's files are not its own.
inline void remove_owned_scratch(execution_plan& plan) {
  if (plan.scratch) plan.scratch->remove();
}

// Gives the plan `dir` as its scratch dir (the jail's /work) and writes its files there.
inline status use_scratch_dir(execution_plan& plan, std::shared_ptr<scratch_dir_owner> dir) {
  plan.scratch = std::move(dir);
  plan.work_dir = plan.scratch->path();
  for (const auto& [name, content] : plan.scratch_files)
    if (auto s = plan.scratch->write_file(name, content); !s) return s;
  return ok();
}

// Makes the plan's own scratch dir, bounded by its scratch_bytes, unless it has one or runs
// in a workspace.
inline status make_scratch_dir(execution_plan& plan) {
  if (plan.scratch || !plan.workspace.empty()) return ok();
  auto made = scratch_dir_owner::make(plan.scratch_parent, plan.id, plan.effective.scratch_bytes);
  if (!made) return made.error();
  return use_scratch_dir(plan, std::move(*made));
}

// The lease an execution (or a session, planned as one) asks for.
inline lease_request lease_request_for(const execution_plan& plan) {
  return {plan.id, plan.boundary, plan.effective, plan.workspace_holder};
}

// Replies once to run_atom with an exec_outcome, then quits.
caf::behavior execution(caf::stateful_actor<execution_state>* self, execution_plan plan,
                        execution_env env);

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::execution_started)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::execution_queued)
