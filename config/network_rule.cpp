#include "config/network_rule.hpp"

#include <algorithm>
#include <cctype>

namespace corral {

namespace {

failure bad(std::string_view entry, const std::string& why) {
  return make_failure(failure_kind::config_error, "network entry '" + std::string(entry) + "': " + why);
}

bool label_ok(std::string_view l) {
  if (l.empty() || l.size() > 63 || l.front() == '-' || l.back() == '-') return false;
  return std::all_of(l.begin(), l.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

expected<std::uint16_t> parse_port(std::string_view entry, std::string_view p) {
  if (p.empty() || p.size() > 5 || !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return bad(entry, "the port '" + std::string(p) + "' is not a number from 1 to 65535");
  unsigned long v = std::stoul(std::string(p));
  if (v == 0 || v > 65535) return bad(entry, "the port " + std::string(p) + " is not from 1 to 65535");
  return static_cast<std::uint16_t>(v);
}

// "a.b.c.d[/n]" or an IPv6 address "[/n]" into a range; the host bits must be zero so
// that what the operator wrote is what applies.
status parse_range(std::string_view entry, std::string_view host, network_rule& r) {
  auto slash = host.find('/');
  auto addr = parse_ip_address(host.substr(0, slash));
  if (!addr) return bad(entry, "'" + std::string(host.substr(0, slash)) + "' is not an IP address");
  r.network = *addr;
  r.prefix = addr->bits();
  if (slash != std::string_view::npos) {
    auto len = host.substr(slash + 1);
    if (len.empty() || len.size() > 3 || !std::all_of(len.begin(), len.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoul(std::string(len)) > addr->bits())
      return bad(entry, "the prefix length '/" + std::string(len) + "' must be 0.." + std::to_string(addr->bits()));
    r.prefix = static_cast<unsigned>(std::stoul(std::string(len)));
    ip_address masked;
    masked.v6 = addr->v6;
    for (unsigned i = 0; i < r.prefix; ++i)
      if (addr->bytes[i / 8] & (0x80 >> (i % 8))) masked.bytes[i / 8] |= static_cast<std::uint8_t>(0x80 >> (i % 8));
    if (!(masked == *addr))
      return bad(entry, "host bits are set after /" + std::to_string(r.prefix) + "; did you mean " +
                            to_string(masked) + "/" + std::to_string(r.prefix) + "?");
  }
  r.pattern = host_pattern::address_range;
  return ok();
}

} // namespace

std::string normalized_host_name(std::string_view name) {
  std::string n;
  n.reserve(name.size());
  for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!n.empty() && n.back() == '.') n.pop_back();
  if (n.empty() || n.size() > 253) return "";
  std::size_t start = 0;
  while (true) {
    auto dot = n.find('.', start);
    if (!label_ok(std::string_view(n).substr(start, dot == std::string::npos ? std::string::npos : dot - start)))
      return "";
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return n;
}

expected<network_rule> parse_network_rule(std::string_view entry, rule_list list) {
  if (entry.empty()) return bad(entry, "an entry must not be empty");
  network_rule r;
  std::string_view host = entry, port;
  bool has_port = false;
  if (entry.front() == '[') {
    auto close = entry.find(']');
    if (close == std::string_view::npos) return bad(entry, "'[' without ']'");
    host = entry.substr(1, close - 1);
    auto after = entry.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad(entry, "expected ':PORT' after ']'");
      port = after.substr(1);
      has_port = true;
    }
    if (host.find(':') == std::string_view::npos) return bad(entry, "brackets are for IPv6 addresses");
  } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
    auto colon = entry.find(':');
    host = entry.substr(0, colon);
    port = entry.substr(colon + 1);
    has_port = true;
  }
  if (has_port) {
    auto p = parse_port(entry, port);
    if (!p) return p.error();
    r.ports = {*p};
  } else if (list == rule_list::allow) {
    r.ports = {80, 443};
  }

  bool looks_numeric = host.find(':') != std::string_view::npos || host.find('/') != std::string_view::npos ||
                       parse_ip_address(host).has_value();
  if (looks_numeric) {
    if (auto s = parse_range(entry, host, r); !s) return s.error();
    std::string shown = to_string(r.network) + "/" + std::to_string(r.prefix);
    r.text = r.network.v6 && has_port ? "[" + shown + "]" : shown;
  } else if (host.substr(0, 2) == "*.") {
    r.pattern = host_pattern::name_suffix;
    r.name = normalized_host_name(host.substr(2));
    if (r.name.empty()) return bad(entry, "'" + std::string(host.substr(2)) + "' is not a valid host name");
    if (r.name.find('.') == std::string::npos)
      return bad(entry, "a wildcard must keep at least two labels ('*.example.org', not '*." + r.name + "')");
    r.text = "*." + r.name;
  } else {
    if (host.find('*') != std::string_view::npos)
      return bad(entry, "'*' is only allowed as a whole first label ('*.example.org')");
    r.name = normalized_host_name(host);
    if (r.name.empty()) return bad(entry, "'" + std::string(host) + "' is not a valid host name, IP address or CIDR");
    r.text = r.name;
  }
  if (has_port) r.text += ":" + std::to_string(r.ports.front());
  return r;
}

bool rule_matches_port(const network_rule& r, std::uint16_t port) {
  return r.ports.empty() || std::find(r.ports.begin(), r.ports.end(), port) != r.ports.end();
}

bool rule_matches_name(const network_rule& r, const std::string& n) {
  if (r.pattern == host_pattern::exact_name) return n == r.name;
  if (r.pattern == host_pattern::name_suffix)
    return n.size() > r.name.size() + 1 && n.compare(n.size() - r.name.size(), r.name.size(), r.name) == 0 &&
           n[n.size() - r.name.size() - 1] == '.';
  return false;
}

bool rule_matches_address(const network_rule& r, const ip_address& a) {
  return r.pattern == host_pattern::address_range && in_range(a, r.network, r.prefix);
}

bool rule_covers(const network_rule& outer, const network_rule& inner) {
  if (!outer.ports.empty()) {
    if (inner.ports.empty()) return false;
    for (auto p : inner.ports)
      if (!rule_matches_port(outer, p)) return false;
  }
  switch (inner.pattern) {
    case host_pattern::exact_name: return rule_matches_name(outer, inner.name);
    case host_pattern::name_suffix:
      // *.a.b covers *.a.b and *.x.a.b, never a bare name.
      return outer.pattern == host_pattern::name_suffix &&
             (inner.name == outer.name || rule_matches_name(outer, inner.name));
    case host_pattern::address_range:
      return outer.pattern == host_pattern::address_range && outer.prefix <= inner.prefix &&
             in_range(inner.network, outer.network, outer.prefix);
  }
  return false;
}

} // namespace corral
