// A stdio session: one long-lived child (an MCP or LSP server) inside the boundary, its
// stdin and stdout carrying framed messages (actors/message_framing.hpp), its stderr kept
// in a bounded log. The states and the reasons it ends are in actors/sessions/session_state.hpp, the
// messages it takes and sends in actors/sessions/session_messages.hpp.
//
// Backpressure both ways: stdout is read only while the undelivered messages plus the read
// credit fit the output window, and a message reaches the owner only while the owner has
// credit (acks), so a lagging owner makes the child block on its full pipe; a send is
// answered once the bytes in flight to stdin fit the input window.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "actors/execution.hpp"
#include "actors/execution_planner.hpp"
#include "actors/sessions/session_launch.hpp"
#include "actors/sessions/session_messages.hpp"

namespace corral {

struct stdio_session_plan {
  execution_plan exec;  // argv, env, limits and scratch dir, as for a one-shot execution
  session_request options;
  std::uint64_t number = 0;
};

// Validates the request and plans it as the supervisor plans an execution (the same
// limits, environment and scratch dir), or says why it cannot run.
expected<stdio_session_plan> plan_stdio_session(const session_request& request, const std::string& id,
                                                std::uint64_t number, const planning_context& ctx);

// Spawns the session; it monitors `owner` (its death cancels the session) and reports
// everything to it. The session removes its scratch dir when it ends.
caf::actor spawn_stdio_session(caf::actor_system& system, stdio_session_plan plan, session_env env,
                               caf::actor owner);

} // namespace corral
