#include "config/tighten_network.hpp"

namespace corral {

expected<egress_lists> tighten_network(const profile& prof, const std::optional<std::vector<std::string>>& asked) {
  if (!asked) return prof.egress;
  if (prof.network != network_mode::allowlist)
    return make_failure(failure_kind::refused,
                        std::string("the request gives a network allow-list but the profile's network mode is \"") +
                            (prof.network == network_mode::host ? "host" : "none") +
                            "\"; only an allowlist profile can be narrowed per request");
  egress_lists out;
  out.deny = prof.egress.deny;
  out.test_resolver = prof.egress.test_resolver;
  out.test_idle_timeout = prof.egress.test_idle_timeout;
  for (auto& entry : *asked) {
    auto rule = parse_network_rule(entry, rule_list::allow);
    if (!rule) return make_failure(failure_kind::invalid_request, rule.error().message);
    bool covered = false;
    for (auto& outer : prof.egress.allow) covered = covered || rule_covers(outer, *rule);
    if (covered) {
      out.allow.push_back(std::move(*rule));
    } else if (prof.on_widen == widen_policy::refuse) {
      return make_failure(failure_kind::refused,
                          "the request's network entry \"" + rule->text +
                              "\" is not covered by the profile's [sandbox.network] allow list (requests may "
                              "only narrow it; the operator can set on_widen = \"clamp\" to drop such entries)");
    }
  }
  return out;
}

} // namespace corral
