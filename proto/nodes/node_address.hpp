// Where a node listens or is reached: parsed from the CLI's and the profile's text. Its
// own file so that commands which only parse addresses (the lean `corral`) do not link
// the node stack that dials them.
#pragma once

#include <cstdint>
#include <string>

#include "config/failure.hpp"

namespace corral {

struct node_address {
  std::string host;
  std::uint16_t port = 0;
  std::string label() const;  // "host:port", IPv6 hosts in brackets
};

// "HOST:PORT" or "[V6]:PORT"; port 0 only when `allow_any_port` (a listener's "pick one").
expected<node_address> parse_node_address(const std::string& text, bool allow_any_port = false);

} // namespace corral
