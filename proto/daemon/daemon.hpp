// corral serve: the runtime behind a JSON-RPC 2.0 endpoint (proto/PROTOCOL.md) on a Unix
// socket and/or this process's stdin/stdout.
//
// Life cycle: start the runtime (which sweeps leases a killed daemon left), replace a
// stale socket (or take the one systemd passed), tell systemd it is ready, serve; on SIGTERM/SIGINT stop accepting, remove the socket, close every
// client (their executions are cancelled), then stop the runtime (every execution
// terminated, every lease finished).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "actors/runtime.hpp"
#include <chrono>

#include "config/failure.hpp"
#include "proto/nodes/node_listener.hpp"
#include "proto/nodes/node_tls.hpp"
#include "proto/daemon/default_socket.hpp"
#include "proto/daemon/peer_credentials.hpp"
#include "proto/daemon/service_manager.hpp"
#include "proto/daemon/socket_loop.hpp"
#include "proto/e2b/e2b_server.hpp"

namespace corral {

struct daemon_options {
  std::string socket_path;  // empty with `stdio` or `activated_socket`: no socket to bind
  socket_access access;     // the bound socket's mode and group
  // A listening socket systemd passed (proto/daemon/service_manager.hpp): served instead
  // of binding socket_path.
  std::optional<int> activated_socket;
  bool stdio = false;
  access_list allowed;      // empty: the daemon's own uid
  socket_loop_limits limits;
  std::size_t max_execs_per_client = 64;
  std::chrono::milliseconds idle_timeout{300'000};  // see daemon_info::idle_timeout
  // Also a node for other machines (proto/nodes/node_listener.hpp): always mutual TLS.
  std::optional<node_address> node_listen;
  node_tls node_credentials;
  std::function<void(const node_address&)> node_listening;  // told the bound address
  std::function<void(const std::string&)> listening;  // told the socket once it accepts
  // Told READY=1 once every listener accepts, STOPPING=1 when a stop begins.
  service_manager_notifier service_manager;
  // Also the E2B API (proto/e2b/): plain HTTP, loopback unless e2b_allow_remote.
  std::optional<e2b_listen_address> e2b_listen;
  bool e2b_allow_remote = false;
  std::string e2b_dir;  // keys and sandbox records; empty: default_e2b_dir
  std::function<void(const e2b_listen_address&)> e2b_listening;  // told the bound address
};

// Blocks until stopped; returns why it could not start, or ok after a clean stop.
status run_daemon(runtime_options runtime, daemon_options options);

} // namespace corral
