// A node: the runtime's gateway (proto/nodes/node_gateway.hpp) published on a TCP port through
// CAF's middleman, always behind mutual TLS (proto/nodes/node_tls.hpp). There is no plaintext
// mode: an unauthenticated port would let anyone on the network run code here.
//
//   runtime_options ro; ro.configure_system = [tls](auto& cfg) { configure_node_network(cfg, tls); };
//   auto rt = runtime::start(ro);
//   auto node = node_listener::publish(**rt, {"0.0.0.0", 4710});   // port 0: any free port
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor.hpp>

#include "actors/runtime.hpp"
#include "config/failure.hpp"
#include "proto/nodes/node_address.hpp"

namespace corral {

class node_listener {
public:
  // Fails when the runtime was started without configure_node_network (no TLS module),
  // or when the port cannot be bound.
  static expected<std::unique_ptr<node_listener>> publish(runtime& rt, const node_address& where);
  ~node_listener();  // the gateway quits; the port closes with the runtime's actor system

  std::uint16_t port() const { return port_; }

private:
  node_listener(caf::actor gateway, std::uint16_t port) : gateway_(std::move(gateway)), port_(port) {}
  caf::actor gateway_;
  std::uint16_t port_;
};

} // namespace corral
