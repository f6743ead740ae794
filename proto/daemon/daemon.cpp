#include "proto/daemon/daemon.hpp"

#include "proto/e2b/api_keys.hpp"

#include <chrono>
#include <cstdlib>
#include <memory>
#include <unistd.h>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "proto/daemon/client_connection.hpp"
#include "proto/daemon/early_signals.hpp"
#include "proto/describe/descriptor.hpp"
#include "proto/describe/machine_report.hpp"

namespace corral {

status run_daemon(runtime_options ro, daemon_options options) {
  // From here until the runtime has stopped, SIGTERM ends the daemon cleanly, whenever it
  // comes (early_signals.hpp).
  hold_stop_signals();
  if (options.socket_path.empty() && !options.stdio && !options.activated_socket)
    options.socket_path = default_socket_path();
  if (options.allowed.uids.empty() && options.allowed.gids.empty()) options.allowed.uids.push_back(::geteuid());
  auto policy = selection_policy_from_env(ro.allow_host);
  if (options.node_listen) {
    if (auto s = check_node_tls(options.node_credentials); !s) return s;
    ro.configure_system = [tls = options.node_credentials](caf::actor_system_config& cfg) {
      configure_node_network(cfg, tls);
    };
  }

  // The runtime first: it creates the state directory (where the default socket lives)
  // and sweeps leases a killed daemon left before anything new can start.
  auto started = runtime::start(std::move(ro));
  if (!started) return started.error();
  auto rt = std::move(*started);

  auto info = std::make_shared<daemon_info>();
  info->supervisor = rt->supervisor();
  info->workspaces = rt->workspaces();
  info->capabilities = machine_report(rt->features(), rt->tiers(), policy, &rt->frozen_profile());
  info->descriptor = profile_descriptor(rt->frozen_profile(), rt->features(), rt->tiers());
  info->started = std::chrono::steady_clock::now();
  info->max_execs_per_client = options.max_execs_per_client;
  info->idle_timeout = options.idle_timeout;

  auto* sys = &rt->system();
  std::shared_ptr<const daemon_info> shared;
  socket_loop loop(options.limits, [sys, &shared](connection_id id, const peer_credentials& peer) {
    return sys->spawn(client_connection, id, peer, shared);
  });
  info->loop = &loop;
  shared = info;

  if (options.activated_socket || !options.socket_path.empty()) {
    auto listened = options.activated_socket ? loop.listen_on(*options.activated_socket, options.allowed)
                                             : loop.listen(options.socket_path, options.allowed, options.access);
    if (!listened) return listened;
    auto where = loop.listening_path();
    spdlog::info("serving on {}{} for {}", where, options.activated_socket ? " (passed by systemd)" : "",
                 options.allowed.describe());
    if (options.listening) options.listening(where);
  }
  if (options.stdio) {
    if (auto s = loop.attach_stdio(); !s) return s;
  }
  std::unique_ptr<node_listener> node;
  if (options.node_listen) {
    auto published = node_listener::publish(*rt, *options.node_listen);
    if (!published) return published.error();
    node = std::move(*published);
    auto bound = *options.node_listen;
    bound.port = node->port();
    spdlog::info("serving as a node on {}", bound.label());
    if (options.node_listening) options.node_listening(bound);
  }
  std::unique_ptr<e2b_server> e2b;
  if (options.e2b_listen) {
    e2b_gateway_config gc;
    gc.dir = options.e2b_dir.empty() ? default_e2b_dir(rt->workspaces_dir()) : options.e2b_dir;
    gc.supervisor = rt->supervisor();
    gc.workspaces = rt->workspaces();
    gc.workspaces_dir = rt->workspaces_dir();
    gc.settings = rt->frozen_profile().workspaces;
    gc.network_none = rt->frozen_profile().network == network_mode::none;
    auto keys = read_keys(gc.dir);
    if (!keys) return keys.error();
    if (keys->empty()) spdlog::warn("e2b: no API keys in {} yet: `corral e2b key add` issues one", gc.dir);
    auto served = e2b_server::start(rt->system(), std::move(gc), *options.e2b_listen, options.e2b_allow_remote);
    if (!served) return served.error();
    e2b = std::move(*served);
    auto bound = *options.e2b_listen;
    bound.port = e2b->port();
    spdlog::info("serving the E2B API on {}", bound.label());
    if (options.e2b_listening) options.e2b_listening(bound);
  }
  // Ready only now that every listener accepts: a unit ordered After=corral.service
  // connects without retrying.
  if (auto told = options.service_manager.notify("READY=1\nSTATUS=serving " + loop.listening_path() +
                                                 "\nMAINPID=" + std::to_string(::getpid()));
      !told)
    spdlog::warn("{}", told.error().describe());
  loop.run();
  hold_stop_signals();  // the loop's watchers are gone: the leases still finish
  (void)options.service_manager.notify("STOPPING=1\nSTATUS=stopping: ending executions and removing their leases");
  e2b.reset();  // no new sandbox calls; their processes end with the runtime
  node.reset();  // no new remote executions while the runtime stops
  // Every client is closed by now, so every execution has been told to cancel; stopping
  // the runtime waits until their leases have finished. The loop outlives the actors.
  rt.reset();
  return ok();
}

} // namespace corral
