#include "proto/cli/allow_net.hpp"

namespace corral::cli {

expected<std::vector<std::string>> parse_allow_net(const std::string& value) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    auto comma = value.find(',', start);
    auto entry = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (auto rule = parse_network_rule(entry, rule_list::allow); !rule)
      return make_failure(failure_kind::invalid_request, "--allow-net: " + rule.error().message);
    out.push_back(entry);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

status apply_allow_net(profile& prof, const std::vector<std::string>& entries) {
  if (entries.empty()) return ok();
  std::vector<network_rule> allow;
  for (auto& e : entries) {
    auto rule = parse_network_rule(e, rule_list::allow);
    if (!rule) return make_failure(failure_kind::invalid_request, "--allow-net: " + rule.error().message);
    allow.push_back(std::move(*rule));
  }
  prof.network = network_mode::allowlist;
  prof.egress.allow = std::move(allow);
  return ok();
}

std::optional<std::vector<std::string>> allow_net_request(const std::vector<std::string>& entries) {
  if (entries.empty()) return std::nullopt;
  return entries;
}

} // namespace corral::cli
