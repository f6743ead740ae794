#include "config/boundary_grants.hpp"

#include <filesystem>

#include "config/protected_paths.hpp"
#include "config/root_layout.hpp"

namespace corral {

namespace fs = std::filesystem;

namespace {

std::string absolute_in(const std::string& path, const std::string& cwd) {
  fs::path p = path;
  if (p.is_relative()) p = fs::path(cwd) / p;
  auto s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

expected<root_grant> parse_grant(const std::string& flag, const std::string& value, bool writable,
                                 const std::string& cwd) {
  auto colon = value.find(':');
  if (colon != std::string::npos && value.find(':', colon + 1) != std::string::npos)
    return make_failure(failure_kind::config_error,
                        flag + " " + value + ": expected HOST[:INSIDE] (paths containing ':' are not supported)");
  std::string host = absolute_in(value.substr(0, colon), cwd);
  std::string inside = colon == std::string::npos ? host : value.substr(colon + 1);
  if (colon == 0) host.clear();
  auto g = resolve_root(host, inside, writable);
  if (!g) return make_failure(failure_kind::config_error, flag + " " + value + ": " + g.error().message);
  return g;
}

} // namespace

bool boundary_grants::shapes_boundary() const {
  return !read_only.empty() || !writable.empty() || network || !working_dir.empty() || here != here_mode::none;
}

status apply_grants(profile& p, const boundary_grants& grants, const std::string& caller_cwd) {
  auto add = [&](const std::string& flag, const std::string& value, bool writable) -> status {
    auto g = parse_grant(flag, value, writable, caller_cwd);
    if (!g) return g.error();
    (writable ? p.output_roots : p.source_roots).push_back(std::move(*g));
    return ok();
  };
  for (auto& v : grants.read_only)
    if (auto s = add("--ro", v, false); !s) return s;
  for (auto& v : grants.writable)
    if (auto s = add("--rw", v, true); !s) return s;
  if (grants.here != here_mode::none) {
    const char* flag = grants.here == here_mode::writable ? "--here" : "--here=ro";
    if (auto s = add(flag, caller_cwd, grants.here == here_mode::writable); !s) return s;
    auto& roots = grants.here == here_mode::writable ? p.output_roots : p.source_roots;
    p.working_dir = roots.back().virtual_path;
  }
  if (!grants.working_dir.empty()) p.working_dir = grants.working_dir;
  if (grants.network) p.network = *grants.network;
  for (auto& [k, v] : grants.env) p.env[k] = v;
  if (auto s = check_root_layout(p); !s) return s;
  return mask_protected(p, {(fs::path(caller_cwd) / ".git").string()});
}

} // namespace corral
