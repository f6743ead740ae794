#include "proto/e2b/e2b_server.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "proto/e2b/e2b_connection.hpp"

namespace corral {

std::string e2b_listen_address::label() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

expected<e2b_listen_address> parse_e2b_address(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos)
    return make_failure(failure_kind::invalid_request, "--e2b-listen needs HOST:PORT, not '" + text + "'");
  e2b_listen_address a;
  auto host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (!host.empty()) a.host = host;
  try {
    auto port = std::stoul(text.substr(colon + 1));
    if (port > 65535) throw std::out_of_range("port");
    a.port = static_cast<std::uint16_t>(port);
  } catch (const std::exception&) {
    return make_failure(failure_kind::invalid_request, "--e2b-listen: '" + text.substr(colon + 1) + "' is not a port");
  }
  return a;
}

expected<std::unique_ptr<e2b_server>> e2b_server::start(caf::actor_system& system, e2b_gateway_config config,
                                                        const e2b_listen_address& where, bool allow_remote,
                                                        http_limits limits) {
  if (!is_loopback_host(where.host) && !allow_remote)
    return make_failure(failure_kind::refused,
                        "--e2b-listen " + where.label() +
                            " is not a loopback address: E2B's API keys and access tokens would cross the network in "
                            "plain HTTP. Serve it on 127.0.0.1 behind a TLS proxy, or pass --e2b-allow-remote to "
                            "accept that");
  std::unique_ptr<e2b_server> s(new e2b_server());
  s->gateway_ = spawn_e2b_gateway(system, std::move(config));
  auto gateway = s->gateway_;
  auto* sys = &system;
  // The loop is shared with its connections' actors: one still finishing a write after
  // stop() must find it there.
  auto weak = std::make_shared<std::weak_ptr<http_loop>>();
  s->loop_ = std::make_shared<http_loop>(limits, [sys, gateway, weak](std::uint64_t id, const std::string&) {
    auto loop = weak->lock();
    return loop ? spawn_e2b_connection(*sys, loop, id, gateway) : caf::actor{};
  });
  *weak = s->loop_;
  if (auto bound = s->loop_->listen(where.host, where.port); !bound) {
    caf::anon_send_exit(s->gateway_, caf::exit_reason::user_shutdown);
    return bound.error();
  }
  s->loop_->start();
  return s;
}

e2b_server::~e2b_server() {
  if (loop_) loop_->stop();
  if (gateway_) caf::anon_send_exit(gateway_, caf::exit_reason::user_shutdown);
}

} // namespace corral
