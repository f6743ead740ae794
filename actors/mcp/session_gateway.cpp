#include "actors/mcp/session_gateway.hpp"

#include <filesystem>

#include "tiers/jail/system_view.hpp"

namespace corral {

namespace fs = std::filesystem;

namespace {

// The path with its directory's symlinks resolved (the file itself may not exist yet).
std::string resolved(const std::string& path) {
  std::error_code ec;
  auto p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

} // namespace

std::string reachable_from_inside(const profile& prof, const std::string& work_dir, const std::string& path) {
  auto real = resolved(path);
  // The view's own answer: the system dirs it shows (/usr, /usr/local among them) as well as
  // the granted roots.
  if (auto inside = visible_in_view(real, prof.source_roots, prof.output_roots); !inside.empty())
    return "the server's view (at " + inside + ")";
  if (!work_dir.empty() && is_under(real, resolved(work_dir))) return work_dir + " (the child's own directory)";
  return {};
}

expected<std::optional<session_gateway>> open_gateway(const profile& prof, const std::optional<mcp_policy>& request,
                                                      const std::string& work_dir, bool host_tier) {
  std::vector<mcp_policy> layers;
  if (!prof.mcp.transparent()) layers.push_back(prof.mcp);
  if (request && !request->transparent()) layers.push_back(*request);
  if (layers.empty()) return std::optional<session_gateway>{};
  session_gateway g;
  for (const auto& layer : layers) {
    if (layer.audit.empty()) continue;
    if (!host_tier)
      if (auto root = reachable_from_inside(prof, work_dir, layer.audit); !root.empty())
        return make_failure(failure_kind::config_error,
                            "the MCP audit file " + layer.audit + " lies inside " + root +
                                ", which the server can reach; put it outside the view (the granted roots and /usr, /bin, /lib)");
    auto log = mcp_audit_log::open(layer.audit, layer.audit_max_bytes);
    if (!log) return log.error();
    g.audits.push_back(std::make_shared<mcp_audit_log>(std::move(*log)));
  }
  auto config = make_gate_config(std::move(layers));
  if (!config) return config.error();
  g.gate = std::make_shared<mcp_gate>(std::move(*config));
  return std::optional<session_gateway>{std::move(g)};
}

} // namespace corral
