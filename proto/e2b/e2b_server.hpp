// The E2B gateway on a TCP port: the HTTP loop (proto/http/http_loop.hpp), an actor per
// connection and the gateway actor. `corral serve --e2b-listen` runs one beside the
// daemon's socket. Plain HTTP, so only on a loopback address unless the operator says
// otherwise (put a TLS proxy in front): the API key and access tokens travel in headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "config/failure.hpp"
#include "proto/e2b/e2b_gateway.hpp"
#include "proto/http/http_loop.hpp"

namespace corral {

struct e2b_listen_address {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string label() const;
};

// "HOST:PORT", "[v6]:PORT" or ":PORT" (loopback).
expected<e2b_listen_address> parse_e2b_address(const std::string& text);
bool is_loopback_host(const std::string& host);

class e2b_server {
public:
  // Refuses a non-loopback address unless `allow_remote`.
  static expected<std::unique_ptr<e2b_server>> start(caf::actor_system& system, e2b_gateway_config config,
                                                     const e2b_listen_address& where, bool allow_remote,
                                                     http_limits limits = {});
  ~e2b_server();  // closes every connection, then stops the gateway
  e2b_server(const e2b_server&) = delete;
  e2b_server& operator=(const e2b_server&) = delete;

  std::uint16_t port() const { return loop_->port(); }
  caf::actor gateway() const { return gateway_; }

private:
  e2b_server() = default;
  std::shared_ptr<http_loop> loop_;
  caf::actor gateway_;
};

} // namespace corral
