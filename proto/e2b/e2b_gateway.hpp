// corral's E2B gateway: the E2B control plane (sandboxes for API keys) and the in-sandbox
// API the SDKs call envd (processes and files), mapped onto the runtime's workspaces. One
// actor holds the decisions (which key owns which sandbox, its timeout, its processes);
// each HTTP connection has an actor of its own (e2b_connection.hpp) that asks it.
//
// A sandbox is a workspace owned by the principal "e2b:<key id>" whose files appear at
// /home/user as well as /work. Its E2B timeout is the gateway's: at it (a tick a second)
// the sandbox's processes are ended, then its workspace. A restarted gateway reads its
// sandbox records again (sandbox_record.hpp) and keeps those whose workspace still exists.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "config/workspace_settings.hpp"

namespace corral {

struct e2b_gateway_config {
  std::string dir;  // keys.json and sandboxes/ (api_keys.hpp)
  caf::actor supervisor;
  caf::actor workspaces;
  std::string workspaces_dir;  // where the registry keeps each workspace (a watch opens its files)
  // The longest timeout a sandbox may ask for, and the templates it may name: "base" (the
  // profile as it is) and [sandbox.workspaces.templates.NAME] (narrower limits, more env).
  workspace_settings settings;
  bool network_none = true;     // the profile's network: allow_internet_access=false narrows
                                // nothing only where there is none
};

caf::actor spawn_e2b_gateway(caf::actor_system& system, e2b_gateway_config config);

// Whether a path is one of envd's server-streaming calls (answered as a Connect stream,
// even when it fails).
bool is_stream_call(const std::string& path);

} // namespace corral
