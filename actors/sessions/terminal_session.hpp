// A terminal session: one child on a pseudo-terminal inside the boundary (the exec helper
// makes the pty its controlling terminal), output kept in a bounded scrollback so clients
// can detach and re-attach; several may view it, one of them writes. Its lifetime is
// independent of whoever opened it or views it: it ends when
// the child exits, on cancel, at its lifetime deadline, or (failed) at the startup deadline,
// always through the lease (actors/sessions/session_lifecycle.hpp, shared with the stdio
// session). States and reasons: actors/sessions/session_state.hpp; messages:
// actors/sessions/session_messages.hpp.
#pragma once

#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "actors/sessions/session_messages.hpp"
#include "actors/sessions/session_planning.hpp"

namespace corral {

// What a terminal runs: its argv, or /bin/sh when it names none.
std::vector<std::string> terminal_program(const terminal_request& request);

// Validates the request, plans it as an execution (TERM defaults to xterm-256color, the
// program to /bin/sh) and spawns the terminal, or says why it cannot run.
expected<caf::actor> open_session(caf::actor_system& system, const terminal_request& request, session_opening at);

} // namespace corral
