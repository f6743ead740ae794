// One entry of [sandbox.network] allow or deny: an exact name ("pypi.org"), a wildcard
// ("*.pythonhosted.org": any name below it, never the bare name), an IP literal or a CIDR
// ("10.1.2.0/24"), each with an optional port (":5432"; IPv6 in brackets: "[fc00::/7]:443").
// Without a port an allow entry means 80 and 443, a deny entry every port: a deny is
// meant to close a name, and closing only the web ports would leave the rest open.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/address_class.hpp"
#include "config/failure.hpp"

namespace corral {

enum class host_pattern { exact_name, name_suffix, address_range };

struct network_rule {
  host_pattern pattern = host_pattern::exact_name;
  std::string name;         // lower case, no trailing dot; for name_suffix without "*."
  ip_address network;       // address_range only
  unsigned prefix = 0;      // address_range only
  std::vector<std::uint16_t> ports;  // empty: every port
  std::string text;         // the entry in canonical form, as descriptors and audits show it
};

enum class rule_list { allow, deny };

// A clear message naming the entry and what is wrong with it.
expected<network_rule> parse_network_rule(std::string_view entry, rule_list list);

// A host name as the proxy compares it: lower case, one trailing dot dropped. Empty when
// it is not a valid DNS name (labels of letters, digits, '-' and '_', 1..63 bytes, 253 in all).
std::string normalized_host_name(std::string_view name);

bool rule_matches_port(const network_rule& r, std::uint16_t port);
bool rule_matches_name(const network_rule& r, const std::string& normalized_name);
bool rule_matches_address(const network_rule& r, const ip_address& a);

// True when every destination `inner` admits, `outer` admits too (a request's entry
// narrowing the profile's).
bool rule_covers(const network_rule& outer, const network_rule& inner);

} // namespace corral
