// corral mcp --connect: the same transparent proxy, with the daemon's stdio session
// (session.open/write/close, proto/PROTOCOL.md) running the server.
#pragma once

#include <string>

#include "actors/sessions/session_messages.hpp"

namespace corral::cli {

// Lines from stdin go to the server as they are (CR kept, no newline); its messages come
// back one per line on stdout; its stderr is copied to stderr as it comes (the session's
// forward_stderr). Returns the server's exit status (128+N for signal N).
int mcp_via_daemon(const session_request& request, const std::string& socket_path);

} // namespace corral::cli
