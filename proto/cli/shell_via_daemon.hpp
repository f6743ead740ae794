// corral shell --connect: the same interactive terminal, with a `corral serve` daemon's
// terminal session (session.open/write/resize, proto/PROTOCOL.md) running the program.
#pragma once

#include <string>

#include "actors/sessions/session_messages.hpp"

namespace corral::cli {

// Which terminal: a new one (session.open), or one a workspace keeps (workspace.attach).
struct terminal_choice {
  bool attach = false;
  std::string terminal;        // with attach: "" is the latest started
  bool view = false;           // with attach: watch only (no typing, no resize)
  bool open_if_none = false;   // with attach: a workspace with no terminal gets a new one
};

// Keystrokes go to the session as they are, its output comes back to stdout, window changes
// become session.resize. A workspace's terminal is left running by ctrl-p ctrl-q (and by
// this client going). Returns the program's exit status (128+N for signal N), 0 when
// detached, or 125 (with the reason on stderr) when the terminal could not start or the
// daemon went away.
int shell_via_daemon(const terminal_request& request, const std::string& socket_path, const terminal_choice& choice = {});

} // namespace corral::cli
