// The egress decision, pure: the destination as the program named it is checked against
// deny, then allow; then every address it resolved to is checked against deny ranges and
// the special-address rule (config/address_class.hpp). The proxy connects only to an
// address this module accepted, so a second resolution cannot swap it (DNS rebinding).
#pragma once

#include <cstdint>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "config/network_rule.hpp"

namespace corral {

// [sandbox.network]'s lists; used when the mode is allowlist.
struct egress_lists {
  std::vector<network_rule> allow;
  std::vector<network_rule> deny;
  // Not a TOML key: tests map names to addresses so no real resolver is asked (like
  // microvm_settings::kvm_device). Empty: the system resolver.
  std::map<std::string, std::vector<std::string>> test_resolver;
  // Not a TOML key either: tests shorten the relay's idle bound to see it fire. It can
  // only shorten egress_limits::idle_timeout (the relay takes the smaller); zero: unset.
  std::chrono::milliseconds test_idle_timeout{0};
};

enum class egress_outcome {
  allowed,
  denied_by_rule,    // a deny entry matched
  not_on_allowlist,  // no allow entry matched the name or address
  address_refused,   // resolved to a special address no allow range names
  malformed,         // not a host name or IP literal at all
  unresolved,        // the resolver found no address (or failed)
};

struct egress_verdict {
  egress_outcome outcome = egress_outcome::not_on_allowlist;
  std::string rule;    // the entry that decided, canonical text; empty when none did
  std::string reason;  // for the program and the audit: what happened and which key to change

  bool allowed() const { return outcome == egress_outcome::allowed; }
};

const char* to_string(egress_outcome o);

// `host` is a name or an IP literal (IPv6 without brackets), as CONNECT or SOCKS gave it.
egress_verdict check_destination(const egress_lists& lists, const std::string& host, std::uint16_t port);

// One resolved (or literal) address of a destination whose name was allowed.
egress_verdict check_address(const egress_lists& lists, const ip_address& a, std::uint16_t port);

// The name check then every address: one refused address refuses the destination, since a
// name that resolves to both a public and a metadata address is an attack, not a mirror.
egress_verdict check_resolved(const egress_lists& lists, const std::string& host, std::uint16_t port,
                              const std::vector<ip_address>& addresses);

} // namespace corral
