// The flags `run`, `mcp` and `shell` share: --tier, --config, --connect, --workspace, --allow-net,
// --allow-host, -v, the limit flags (limit_flags.hpp) and the grant flags (grant_flags.hpp).
// Read once here; each command reads its own flags around them.
#pragma once

#include <string>
#include <vector>

#include "config/boundary_grants.hpp"
#include "config/failure.hpp"
#include "proto/cli/allow_net.hpp"
#include "proto/cli/daemon_session.hpp"
#include "proto/cli/grant_flags.hpp"
#include "proto/cli/limit_flags.hpp"

namespace corral::cli {

struct command_flags {
  std::string tier;  // empty: the profile's
  std::string config_path;
  std::string connect_socket;  // through this daemon instead of in-process
  std::string workspace;       // in the daemon's workspace (needs connect_socket)
  boundary_grants grants;
  limit_flags limits;
  std::vector<std::string> allow_net;  // --allow-net entries (allow_net.hpp)
  bool allow_host = false;
  bool verbose = false;
  // `corral mcp --print-pin`: the profile's [mcp] gateway is left out (the pin is of what
  // the server offers; corral itself is the only client).
  bool mcp_policy_off = false;
};

// When args[i] is one of the shared flags, consumes it (and its value, advancing i) and
// answers true; false when it is not one. A missing or bad value is an invalid_request
// naming the flag ("--config needs a value").
expected<bool> take_command_flag(const std::vector<std::string>& args, std::size_t& i, command_flags& f);

// --workspace names a workspace of a daemon: refused without --connect, saying so.
status workspace_needs_connect(const command_flags& f);

// --help or -h before "--" (after it they are the program's).
bool asks_for_help(const std::vector<std::string>& args);

// --tier, --config, --connect, --allow-net and --workspace: the shared flags with a value of their own.
bool is_command_value_flag(const std::string& flag);

// With --connect the daemon's profile and opt-ins apply: --config, --allow-host and the
// grants that shape the boundary are refused; the grants' variables and --allow-net travel
// in `request` (exec, session and terminal requests name env and network_allow alike).
template <class Request>
status carry_to_daemon(const command_flags& f, Request& request) {
  if (auto s = connect_excludes_local_options(f.config_path, f.allow_host); !s) return s;
  // --cwd only says where the program starts: the request carries it (the daemon's view applies).
  auto grants = f.grants;
  request.cwd = std::move(grants.working_dir);
  grants.working_dir.clear();
  if (auto s = connect_excludes_grants(grants); !s) return s;
  request.env.insert(f.grants.env.begin(), f.grants.env.end());  // a request may set variables
  request.network_allow = allow_net_request(f.allow_net);         // narrows the daemon's list
  request.workspace = f.workspace;
  return ok();
}

} // namespace corral::cli
