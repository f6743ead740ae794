// How `corral mcp` tells the MCP host's log (stderr) what the gateway refused: one line per
// refusal naming the rule, the same in-process and through a daemon's session.gate.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace corral::cli {

// "corral mcp: refused tools/call write_file: unknown tool … (mcp.tools.deny write_file)";
// empty for a decision that is not a refusal.
std::string gate_refusal_line(const nlohmann::json& decision);

} // namespace corral::cli
