#include "config/egress_decision.hpp"

namespace corral {

namespace {

std::string port_text(std::uint16_t port) { return std::to_string(port); }

const network_rule* first_name_match(const std::vector<network_rule>& rules, const std::string& name,
                                     std::uint16_t port) {
  for (auto& r : rules)
    if (rule_matches_name(r, name) && rule_matches_port(r, port)) return &r;
  return nullptr;
}

const network_rule* first_address_match(const std::vector<network_rule>& rules, const ip_address& a,
                                        std::uint16_t port) {
  for (auto& r : rules)
    if (rule_matches_address(r, a) && rule_matches_port(r, port)) return &r;
  return nullptr;
}

egress_verdict denied(const network_rule& r, const std::string& what) {
  return {egress_outcome::denied_by_rule, r.text,
          what + " is denied by the entry \"" + r.text + "\" in [sandbox.network] deny"};
}

egress_verdict unlisted(const std::string& what, const std::string& suggestion) {
  return {egress_outcome::not_on_allowlist, "",
          what + " is not on the allow-list; add \"" + suggestion + "\" to [sandbox.network] allow "
          "(or pass --allow-net) to permit it"};
}

} // namespace

const char* to_string(egress_outcome o) {
  switch (o) {
    case egress_outcome::allowed: return "allowed";
    case egress_outcome::denied_by_rule: return "denied";
    case egress_outcome::not_on_allowlist: return "not_allowed";
    case egress_outcome::address_refused: return "address_refused";
    case egress_outcome::malformed: return "malformed";
    case egress_outcome::unresolved: return "unresolved";
  }
  return "unknown";
}

egress_verdict check_address(const egress_lists& lists, const ip_address& a, std::uint16_t port) {
  auto shown = to_string(a) + " port " + port_text(port);
  if (auto* r = first_address_match(lists.deny, a, port)) return denied(*r, shown);
  auto cls = classify(a);
  const network_rule* named = first_address_match(lists.allow, a, port);
  if (cls.kind == address_class::public_internet) return {egress_outcome::allowed, named ? named->text : "", ""};
  // A range "names" a special block only when it lies inside it: 0.0.0.0/0 admits the
  // internet, not the metadata service.
  if (named && named->prefix >= cls.block_prefix) return {egress_outcome::allowed, named->text, ""};
  std::string literal = to_string(a) + (a.v6 ? "/128" : "/32");
  return {egress_outcome::address_refused, "",
          shown + " is a " + std::string(to_string(cls.kind)) + " address, refused unless an allow entry names "
          "its range; add \"" + (a.v6 ? "[" + literal + "]" : literal) + ":" + port_text(port) +
          "\" to [sandbox.network] allow if it is meant to be reached"};
}

egress_verdict check_destination(const egress_lists& lists, const std::string& host, std::uint16_t port) {
  if (port == 0) return {egress_outcome::malformed, "", "port 0 is not a destination"};
  if (auto literal = parse_ip_address(host)) {
    auto shown = host + " port " + port_text(port);
    if (auto* r = first_address_match(lists.deny, *literal, port)) return denied(*r, shown);
    // A literal bypasses every name entry: only an address range can admit it.
    if (!first_address_match(lists.allow, *literal, port))
      return unlisted(shown, (literal->v6 ? "[" + host + "]" : host) + ":" + port_text(port));
    return check_address(lists, *literal, port);
  }
  auto name = normalized_host_name(host);
  if (name.empty()) return {egress_outcome::malformed, "", "'" + host + "' is not a valid host name or IP address"};
  auto shown = name + " port " + port_text(port);
  if (auto* r = first_name_match(lists.deny, name, port)) return denied(*r, shown);
  if (auto* r = first_name_match(lists.allow, name, port)) return {egress_outcome::allowed, r->text, ""};
  return unlisted(shown, port == 80 || port == 443 ? name : name + ":" + port_text(port));
}

egress_verdict check_resolved(const egress_lists& lists, const std::string& host, std::uint16_t port,
                              const std::vector<ip_address>& addresses) {
  auto v = check_destination(lists, host, port);
  if (!v.allowed()) return v;
  if (addresses.empty()) return {egress_outcome::unresolved, v.rule, host + " resolved to no address"};
  for (auto& a : addresses) {
    auto av = check_address(lists, a, port);
    if (!av.allowed()) return av;
  }
  return v;
}

} // namespace corral
