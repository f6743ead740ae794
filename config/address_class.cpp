#include "config/address_class.hpp"

#include <arpa/inet.h>

namespace corral {

std::optional<ip_address> parse_ip_address(std::string_view text) {
  if (text.empty() || text.size() > 45) return std::nullopt;
  std::string s(text);
  ip_address a;
  if (::inet_pton(AF_INET, s.c_str(), a.bytes.data()) == 1) return a;
  a.v6 = true;
  if (::inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1) return a;
  return std::nullopt;
}

std::string to_string(const ip_address& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.bytes.data(), buf, sizeof buf);
  return buf;
}

bool in_range(const ip_address& a, const ip_address& network, unsigned prefix) {
  if (a.v6 != network.v6 || prefix > a.bits()) return false;
  unsigned whole = prefix / 8, rest = prefix % 8;
  for (unsigned i = 0; i < whole; ++i)
    if (a.bytes[i] != network.bytes[i]) return false;
  if (rest == 0) return true;
  std::uint8_t mask = static_cast<std::uint8_t>(0xff << (8 - rest));
  return (a.bytes[whole] & mask) == (network.bytes[whole] & mask);
}

namespace {

struct special_range {
  const char* network;
  unsigned prefix;
  address_class kind;
};

// Most specific first is not needed: the ranges do not overlap.
constexpr special_range kRanges[] = {
    {"0.0.0.0", 8, address_class::unspecified},
    {"127.0.0.0", 8, address_class::loopback},
    {"10.0.0.0", 8, address_class::private_lan},
    {"172.16.0.0", 12, address_class::private_lan},
    {"192.168.0.0", 16, address_class::private_lan},
    {"100.64.0.0", 10, address_class::shared_cgnat},
    {"169.254.0.0", 16, address_class::link_local},
    {"224.0.0.0", 4, address_class::multicast},
    {"240.0.0.0", 4, address_class::reserved},  // includes 255.255.255.255
    {"::", 128, address_class::unspecified},
    {"::1", 128, address_class::loopback},
    {"fc00::", 7, address_class::unique_local},
    {"fe80::", 10, address_class::link_local},
    {"fec0::", 10, address_class::private_lan},
    {"ff00::", 8, address_class::multicast},
};

// The IPv4 address an IPv6 address stands for, if it is a form the kernel routes as one.
std::optional<ip_address> embedded_v4(const ip_address& a) {
  static const ip_address mapped = *parse_ip_address("::ffff:0.0.0.0");
  static const ip_address nat64 = *parse_ip_address("64:ff9b::");
  static const ip_address compat = *parse_ip_address("::");  // ::a.b.c.d, deprecated
  if (!a.v6) return std::nullopt;
  if (!in_range(a, mapped, 96) && !in_range(a, nat64, 96) && !in_range(a, compat, 96)) return std::nullopt;
  ip_address v4;
  for (int i = 0; i < 4; ++i) v4.bytes[i] = a.bytes[12 + i];
  return v4;
}

} // namespace

classified_address classify(const ip_address& a) {
  // :: and ::1 lie inside ::/96 (compat): the table decides them first.
  for (auto& r : kRanges) {
    auto net = parse_ip_address(r.network);
    if (r.prefix == 128 && in_range(a, *net, r.prefix)) return {r.kind, r.prefix};
  }
  if (auto v4 = embedded_v4(a)) {
    auto inner = classify(*v4);
    // The block as an IPv6 prefix: the 96 bits of the mapping plus the IPv4 block.
    if (inner.kind != address_class::public_internet) inner.block_prefix += 96;
    return inner;
  }
  for (auto& r : kRanges) {
    auto net = parse_ip_address(r.network);
    if (in_range(a, *net, r.prefix)) return {r.kind, r.prefix};
  }
  return {};
}

const char* to_string(address_class c) {
  switch (c) {
    case address_class::public_internet: return "public";
    case address_class::unspecified: return "unspecified";
    case address_class::loopback: return "loopback";
    case address_class::private_lan: return "private";
    case address_class::shared_cgnat: return "shared (CGNAT)";
    case address_class::unique_local: return "unique local";
    case address_class::link_local: return "link-local";
    case address_class::multicast: return "multicast";
    case address_class::reserved: return "reserved";
  }
  return "unknown";
}

} // namespace corral
