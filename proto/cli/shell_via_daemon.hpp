// corral shell --connect: the same interactive terminal, with a `corral serve` daemon's
// terminal session (session.open/write/resize, proto/PROTOCOL.md) running the program.
#pragma once

#include <string>

#include "actors/sessions/session_messages.hpp"

namespace corral::cli {

// Keystrokes go to the session as they are, its output comes back to stdout, window changes
// become session.resize. Returns the program's exit status (128+N for signal N), or 125
// (with the reason on stderr) when the terminal could not start or the daemon went away.
int shell_via_daemon(const terminal_request& request, const std::string& socket_path);

} // namespace corral::cli
