// What the --connect commands share: refusing the options only an in-process runtime reads,
// opening a session on the daemon, waiting on it and the local input together, picking its
// notifications out, and reading the exit status out of session.ended.
#pragma once

#include <optional>
#include <poll.h>
#include <span>
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
  nlohmann::json opened;  // the reply that opened (or attached) it

  // Waits for the daemon's next message or for one of `local` to be ready (revents set),
  // retrying EINTR; a message already buffered is taken without waiting. True: a message
  // went to `on_message`; false: a local fd is ready. A failure: the daemon is lost (or
  // poll failed).
  expected<bool> wait(std::span<pollfd> local, const daemon_client::notification_fn& on_message);
};

// The params of `m` when it is a notification about session `id` (its method in `method`),
// else null: replies, and other sessions' notifications.
const nlohmann::json* session_notification(const nlohmann::json& m, const std::string& id, std::string& method);

// The session.open params every kind takes from its request: argv, env, tier,
// network_allow, workspace and the limits (the CLI refuses its limit flags with --connect; a request
// built otherwise may carry them). Each may only narrow the daemon's profile, so none may
// be dropped on the way (mcp once left --env out).
template <class Request>
nlohmann::json session_open_params(const char* kind, const Request& r) {
  nlohmann::json p{{"kind", kind}};
  if (!r.argv.empty()) p["argv"] = r.argv;
  if (!r.env.empty()) p["env"] = r.env;
  if (!r.tier.empty()) p["tier"] = r.tier;
  if (r.network_allow) p["network_allow"] = *r.network_allow;
  if (r.memory_limit_bytes) p["memory"] = *r.memory_limit_bytes;
  if (r.pids_limit) p["pids"] = *r.pids_limit;
  if (r.cpu_cores) p["cpu"] = *r.cpu_cores;
  if (!r.workspace.empty()) p["workspace"] = r.workspace;
  if (!r.cwd.empty()) p["cwd"] = r.cwd;
  return p;
}

// Connects and calls session.open; on failure prints why on stderr and returns nullopt (the
// caller then exits with kExitRefused). Notifications before the reply go to `on_note`.
std::optional<daemon_session> open_daemon_session(const std::string& socket_path, const nlohmann::json& params,
                                                  const daemon_client::notification_fn& on_note);

// session.ended's params: 128 + the signal that ended the program, its exit code, or
// nullopt when the session ended without either (refused, failed).
std::optional<int> ended_exit_status(const nlohmann::json& params);

} // namespace corral::cli
