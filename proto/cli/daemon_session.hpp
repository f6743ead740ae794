// What the --connect commands share: refusing the options only an in-process runtime reads,
// opening a session on the daemon, and reading the exit status out of session.ended.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "config/failure.hpp"
#include "proto/daemon/daemon_client.hpp"

namespace corral::cli {

// --config and --allow-host set up an in-process runtime; through a daemon its own profile
// and opt-ins apply, so with --connect they are refused rather than silently ignored.
status connect_excludes_local_options(const std::string& config_path, bool allow_host);

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
