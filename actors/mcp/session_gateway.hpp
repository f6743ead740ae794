// A stdio session's MCP gateway, put together when the session opens: the gate made of the
// profile's [mcp] and the request's narrowing (actors/mcp/mcp_gate.hpp), and the audit files
// it writes. Opened before the child starts, so a pin file that cannot be read, an audit
// file that cannot be opened, or one the child could reach refuses the session.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/mcp/mcp_audit_log.hpp"
#include "actors/mcp/mcp_gate.hpp"
#include "config/profile.hpp"

namespace corral {

struct session_gateway {
  std::shared_ptr<mcp_gate> gate;
  std::vector<std::shared_ptr<mcp_audit_log>> audits;
};

// None when both policies are transparent. `work_dir` is the child's own directory (its
// scratch or workspace), which it can always write; `host_tier` skips the reachability
// check, since nothing is outside the host tier's reach.
expected<std::optional<session_gateway>> open_gateway(const profile& prof, const std::optional<mcp_policy>& request,
                                                      const std::string& work_dir, bool host_tier);

// Where the child sees `path` (its view: system dirs and granted roots; or its own
// directory); "" when it cannot reach it.
std::string reachable_from_inside(const profile& prof, const std::string& work_dir, const std::string& path);

} // namespace corral
