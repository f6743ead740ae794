// A terminal session: one child on a pseudo-terminal inside the boundary (the exec helper
// makes the pty its controlling terminal), output kept in a bounded scrollback so a client
// can detach and re-attach. Its lifetime is independent of whoever opened it: it ends when
// the child exits, on cancel, at its lifetime deadline, or (failed) at the startup deadline,
// always through the lease. States and reasons: actors/sessions/session_state.hpp; messages:
// actors/sessions/session_messages.hpp.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "actors/execution.hpp"
#include "actors/execution_planner.hpp"
#include "actors/sessions/session_launch.hpp"
#include "actors/sessions/session_messages.hpp"

namespace corral {

struct terminal_session_plan {
  execution_plan exec;
  terminal_request options;
  std::uint64_t number = 0;
};

expected<terminal_session_plan> plan_terminal_session(const terminal_request& request, const std::string& id,
                                                      std::uint64_t number, const planning_context& ctx);

caf::actor spawn_terminal_session(caf::actor_system& system, terminal_session_plan plan, session_env env);

} // namespace corral
