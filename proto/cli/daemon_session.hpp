// What `corral shell --connect` and `corral mcp --connect` share: opening a session on the
// daemon, and reading the exit status out of its session.ended notification.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "proto/daemon_client.hpp"

namespace corral::cli {

struct daemon_session {
  daemon_client client;
  std::string id;
};

// Connects and calls session.open; on failure prints why on stderr and returns nullopt (the
// caller then exits with kExitRefused). Notifications before the reply go to `on_note`.
std::optional<daemon_session> open_daemon_session(const std::string& socket_path, const nlohmann::json& params,
                                                  const daemon_client::notification_fn& on_note);

// session.ended's params: 128 + the signal that ended the program, its exit code, or
// nullopt when the session ended without either (refused, failed).
std::optional<int> ended_exit_status(const nlohmann::json& params);

} // namespace corral::cli
