// IP addresses and the special-purpose ranges egress refuses by default. A name on the
// allow-list may resolve anywhere (DNS rebinding, a planted record): so loopback, private,
// shared (CGNAT), link-local (cloud metadata), multicast and unspecified addresses are
// refused unless an allow entry names the range itself (config/egress_decision.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace corral {

struct ip_address {
  bool v6 = false;
  std::array<std::uint8_t, 16> bytes{};  // IPv4: the first four

  unsigned bits() const { return v6 ? 128 : 32; }
  bool operator==(const ip_address&) const = default;
};

// Dotted IPv4 or textual IPv6 (no brackets, no zone id); nothing else.
std::optional<ip_address> parse_ip_address(std::string_view text);
std::string to_string(const ip_address& a);

// True when the first `prefix` bits of `a` and `network` agree (same family only).
bool in_range(const ip_address& a, const ip_address& network, unsigned prefix);

enum class address_class {
  public_internet,
  unspecified,   // 0.0.0.0/8, ::
  loopback,      // 127.0.0.0/8, ::1
  private_lan,   // 10/8, 172.16/12, 192.168/16, fec0::/10
  shared_cgnat,  // 100.64.0.0/10
  unique_local,  // fc00::/7
  link_local,    // 169.254.0.0/16 (cloud metadata 169.254.169.254), fe80::/10
  multicast,     // 224.0.0.0/4, ff00::/8
  reserved,      // 240.0.0.0/4 and the broadcast address
};

struct classified_address {
  address_class kind = address_class::public_internet;
  unsigned block_prefix = 0;  // the special range's prefix length (0 for public addresses)
};

// IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses are judged by the
// IPv4 address they carry: the kernel would connect to it.
classified_address classify(const ip_address& a);
const char* to_string(address_class c);

} // namespace corral
