#include "proto/cli/gate_report.hpp"

namespace corral::cli {

std::string gate_refusal_line(const nlohmann::json& d) {
  if (!d.is_object() || d.value("decision", "") != "refuse") return {};
  std::string line = "corral mcp: refused " + d.value("method", std::string("a message"));
  if (auto subject = d.value("subject", std::string()); !subject.empty()) line += " " + subject;
  line += ": " + d.value("error", std::string());
  if (auto rule = d.value("rule", std::string()); !rule.empty()) line += " (" + rule + ")";
  return line;
}

} // namespace corral::cli
