#include "proto/nodes/node_address.hpp"

#include <cstdlib>

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

} // namespace corral
