#include "proto/cli/network_notice.hpp"

namespace corral::cli {

std::string refused_connection_line(const network_event& e) {
  // "allowed" connections went through; one that failed on its way (the destination
  // refused, the proxy's idle bound) is the destination's answer, not a policy decision.
  if (e.decision.empty() || e.decision == "allowed" || e.decision == "abandoned") return {};
  std::string line = "corral: network: " + e.host + ":" + std::to_string(e.port) + " " + e.decision;
  if (!e.rule.empty()) line += " (rule " + e.rule + ")";
  if (const auto& why = e.reason.empty() ? e.failure : e.reason; !why.empty()) line += ": " + why;
  return line;
}

network_event network_event_of(const nlohmann::json& event) {
  network_event e;
  if (!event.is_object()) return e;
  e.host = event.value("host", "");
  if (auto p = event.find("port"); p != event.end() && p->is_number_unsigned()) e.port = p->get<std::uint16_t>();
  e.decision = event.value("decision", "");
  e.rule = event.value("rule", "");
  e.reason = event.value("reason", "");
  e.failure = event.value("failure", "");
  return e;
}

} // namespace corral::cli
