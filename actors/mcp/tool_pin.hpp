// Pinning an MCP server's tool definitions against a "rug pull": a server that is trusted
// for the tools it showed once and later changes what a tool says it does (its description
// reaches the model) or what it takes. A tool's definition is its name, title, description,
// input and output schemas and annotations, canonicalised (keys sorted, no insignificant
// space; `_meta` left out as it may change per listing); the pin is the SHA-256 of the
// canonical array of all of them, sorted by name.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/failure.hpp"

namespace corral {

// name -> canonical definition
using tool_definitions = std::map<std::string, std::string>;

// The canonical form of one tool object of a tools/list result; "" when it has no name.
std::string canonical_tool(const nlohmann::json& tool);
// Adds each tool of a tools/list result's `tools` array.
void add_tools(const nlohmann::json& tools, tool_definitions& into);

// "sha256:<hex>" over the canonical array.
std::string pin_digest(const tool_definitions& tools);

// A pin file: {"pin": "sha256:…", "tools": [definitions]}, as --write-pin writes it.
std::string pin_file_text(const tool_definitions& tools);
expected<tool_definitions> read_pin_file(const std::string& path);

struct tool_changes {
  std::vector<std::string> added;
  std::vector<std::string> removed;
  std::vector<std::string> changed;  // "name (description, inputSchema)"
  bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
  // "changed: read_file (description); added: exfiltrate"
  std::string summary() const;
};

tool_changes diff_tools(const tool_definitions& pinned, const tool_definitions& now);

} // namespace corral
