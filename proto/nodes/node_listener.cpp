#include "proto/nodes/node_listener.hpp"

#include <caf/all.hpp>
#include <caf/openssl/publish.hpp>

#include "proto/describe/descriptor.hpp"
#include "proto/nodes/node_gateway.hpp"

namespace corral {

expected<std::unique_ptr<node_listener>> node_listener::publish(runtime& rt, const node_address& where) {
  auto& sys = rt.system();
  if (!sys.has_openssl_manager())
    return make_failure(failure_kind::internal,
                        "the runtime was started without TLS for nodes (runtime_options::configure_system must call "
                        "configure_node_network)");
  auto desc = profile_descriptor(rt.frozen_profile(), rt.features(), rt.tiers());
  node_load identity;
  identity.capacity = rt.max_concurrent();
  identity.tier = rt.frozen_profile().tier;
  identity.digest = desc["digest"].is_string() ? desc["digest"].get<std::string>() : "";
  identity.descriptor = desc.dump();
  auto gateway = spawn_node_gateway(sys, rt.supervisor(), std::move(identity));
  auto port = caf::openssl::publish(gateway, where.port, where.host.c_str(), true);
  if (!port) {
    caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
    return make_failure(failure_kind::internal, "cannot listen for nodes on " + where.label() + ": " + sys.render(port.error()));
  }
  return std::unique_ptr<node_listener>(new node_listener(std::move(gateway), *port));
}

node_listener::~node_listener() { caf::anon_send_exit(gateway_, caf::exit_reason::user_shutdown); }

} // namespace corral
