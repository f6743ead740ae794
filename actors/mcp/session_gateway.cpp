#include "actors/mcp/session_gateway.hpp"

#include <filesystem>

namespace corral {

namespace fs = std::filesystem;

namespace {

bool inside(const std::string& path, const std::string& dir) {
  if (dir.empty()) return false;
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return path == base || base == "/" || path.rfind(base + "/", 0) == 0;
}

// The path with its directory's symlinks resolved (the file itself may not exist yet).
std::string resolved(const std::string& path) {
  std::error_code ec;
  auto p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

} // namespace

std::string reachable_from_inside(const profile& prof, const std::string& work_dir, const std::string& path) {
  auto real = resolved(path);
  for (const auto* roots : {&prof.source_roots, &prof.output_roots})
    for (const auto& g : *roots)
      if (inside(real, g.host_path)) return g.host_path + " (granted at " + g.virtual_path + ")";
  if (!work_dir.empty() && inside(real, resolved(work_dir))) return work_dir + " (the child's own directory)";
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
                                ", which the server can reach; put it outside every granted root");
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
