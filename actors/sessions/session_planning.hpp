// How a session is planned and opened: its child is planned as an `argv` execution of the
// same argv and environment would be (the tier choice, limits that only tighten, network
// narrowing, the scratch dir), so a session never gets another boundary than an execution.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "actors/exec_request.hpp"
#include "actors/execution_planner.hpp"
#include "actors/sessions/session_env.hpp"
#include "actors/sessions/session_messages.hpp"

namespace corral {

// What the supervisor gives each session it opens.
struct session_opening {
  std::string id;  // names the lease, the cgroup and the scratch dir
  std::uint64_t number = 0;
  planning_context ctx;
  session_env env;
};

// `Request` is session_request or terminal_request: both carry the tier, the limits, the
// network narrowing and the startup timeout. Makes the scratch dir (no session takes a warm jail).
template <class Request>
expected<execution_plan> plan_session_child(const Request& request, std::vector<std::string> argv,
                                            std::map<std::string, std::string> env, const session_opening& at) {
  if (request.startup_timeout <= kNoDeadline)
    return make_failure(failure_kind::invalid_request, "the startup timeout must be positive");
  exec_request r;
  r.language = "argv";
  r.argv = std::move(argv);
  r.env = std::move(env);
  r.tier = request.tier;
  r.memory_limit_bytes = request.memory_limit_bytes;
  r.pids_limit = request.pids_limit;
  r.cpu_cores = request.cpu_cores;
  r.network_allow = request.network_allow;
  r.workspace = request.workspace;
  r.cwd = request.cwd;
  auto plan = plan_execution(r, at.id, at.ctx);
  if (!plan) return plan;
  // A session always starts cold: its scratch dir now (work_dir is its gateway's too).
  if (auto made = make_scratch_dir(*plan); !made) return made.error();
  return plan;
}

} // namespace corral
