// A stdio session: one long-lived child (an MCP or LSP server) inside the boundary, its
// stdin and stdout carrying framed messages (actors/message_framing.hpp), its stderr kept
// in a bounded log. Its lease, launch, deadlines and end report are the lifecycle every
// session shares (actors/sessions/session_lifecycle.hpp); the states and the reasons it
// ends are in actors/sessions/session_state.hpp, the messages it takes and sends in
// actors/sessions/session_messages.hpp.
//
// Backpressure both ways: stdout is read only while the undelivered messages plus the read
// credit fit the output window, and a message reaches the owner only while the owner has
// credit (acks), so a lagging owner makes the child block on its full pipe; a send is
// answered once the bytes in flight to stdin fit the input window.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "actors/sessions/session_messages.hpp"
#include "actors/sessions/session_planning.hpp"

namespace corral {

// Validates the request, plans it as the supervisor plans an execution (the same limits,
// environment and scratch dir) and spawns the session, or says why it cannot run. The
// session monitors `owner` (its death cancels the session), reports everything to it and
// removes its scratch dir when it ends.
expected<caf::actor> open_session(caf::actor_system& system, const session_request& request, session_opening at,
                                  caf::actor owner);

} // namespace corral
