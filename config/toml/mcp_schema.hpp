// The profile's [mcp] table: the MCP gateway's policy (config/mcp_policy.hpp).
//
//   [mcp]
//   default = "allow"            # or "deny": methods the gateway does not know are refused
//   pin = "sha256:…"             # corral mcp --print-pin prints it
//   pin_file = "tools.pin.json"  # or the definitions themselves (--write-pin), for a diff
//   on_pin_change = "refuse"     # or "hide": only the changed tools go
//   audit = "/var/log/corral/mcp.jsonl"
//   audit_args = false
//   audit_max = "16m"
//   tools.allow = ["read_*"]     # globs; deny wins
//   tools.deny = ["write_file"]
//   tools.rules = [{ tool = "read_text_file", arg = "path", under = "/project" },
//                  { tool = "search", arg = "query", match = "^[a-z ]+$" },
//                  { tool = "fetch", arg = "max_length", min = 1, max = 10000 }]
//   tools.rate = ["search_*=30/m"]
//   tools.budget = 500           # tools/call per session
//   resources.allow = ["file:///project/*"]
//   prompts.deny = ["*"]
#pragma once

#include <toml++/toml.h>

#include "config/mcp_policy.hpp"
#include "config/toml/toml_reader.hpp"

namespace corral {

void read_mcp(reader& r, const toml::table& t, mcp_policy& p);

} // namespace corral
