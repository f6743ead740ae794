#include "proto/nodes/node_listener.hpp"

#include <cstdlib>

#include <caf/all.hpp>
#include <caf/openssl/publish.hpp>

#include "proto/describe/descriptor.hpp"
#include "proto/nodes/node_gateway.hpp"

namespace corral {

std::string node_address::label() const {
  auto h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

expected<node_address> parse_node_address(const std::string& text, bool allow_any_port) {
  auto bad = [&](const std::string& why) {
    return make_failure(failure_kind::invalid_request, "node address '" + text + "': " + why + " (expected HOST:PORT)");
  };
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad("no host or port");
  node_address out;
  out.host = text.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']')
    out.host = out.host.substr(1, out.host.size() - 2);
  else if (out.host.find(':') != std::string::npos)
    return bad("an IPv6 host goes in brackets");
  auto port_text = text.substr(colon + 1);
  char* end = nullptr;
  auto port = std::strtoul(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port > 65535 || (port == 0 && !allow_any_port))
    return bad("the port must be 1-65535");
  out.port = static_cast<std::uint16_t>(port);
  return out;
}

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
