#include "config/protected_paths.hpp"

#include <filesystem>
#include <optional>

namespace corral {

namespace fs = std::filesystem;

namespace {

struct protected_path {
  std::string path;  // resolved
  std::string what;  // for the message: "the config file", "a .git directory", ...
};

// True when `inner` is `outer` or lies below it; both resolved.
bool within(const std::string& inner, const std::string& outer) {
  if (inner == outer) return true;
  if (outer == "/") return true;
  return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
         inner[outer.size()] == '/';
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// .git directories at or above `dir`: a root inside one (say .git/hooks) exposes it.
void add_git_at_or_above(const std::string& dir, std::vector<protected_path>& out) {
  for (fs::path d = dir;; d = d.parent_path()) {
    if (is_dir(d / ".git")) out.push_back({resolve_for_comparison((d / ".git").string()), "a .git directory"});
    if (d == d.parent_path() || d.empty()) break;
  }
}

// The first .git directory below `root`, within the scan bounds. Symlinks are not
// followed: inside the boundary a symlink resolves in the child's view, not the host's.
std::optional<std::string> find_nested_git(const std::string& root) {
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  std::size_t visited = 0;
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (++visited > kGitScanEntries) break;
    const auto& entry = *it;
    std::error_code type_ec;
    bool dir = entry.is_directory(type_ec) && !entry.is_symlink(type_ec);
    if (!dir) continue;
    if (entry.path().filename() == ".git") return entry.path().string();
    if (it.depth() + 1 >= kGitScanDepth) it.disable_recursion_pending();
  }
  return std::nullopt;
}

std::string relation(const std::string& root, const std::string& prot) {
  if (root == prot) return "is";
  return within(prot, root) ? "contains" : "lies inside";
}

failure exposed(const char* kind, const root_grant& g, const std::string& root,
                const protected_path& prot) {
  return make_failure(failure_kind::config_error,
                      std::string(kind) + " root '" + root + "' (seen at " + g.virtual_path + ") " +
                          relation(root, prot.path) + " " + prot.what + " '" + prot.path +
                          "' (symlinks resolved): a root may not equal, contain or lie inside a "
                          "protected path; narrow the root so it leaves that path out");
}

} // namespace

std::string resolve_for_comparison(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) abs = path;
  fs::path resolved = fs::weakly_canonical(abs, ec);
  if (ec) resolved = abs.lexically_normal();
  std::string s = resolved.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

status check_protected(const profile& p, const std::vector<std::string>& extra_protected) {
  std::vector<protected_path> prot;
  if (!p.config_path.empty()) prot.push_back({resolve_for_comparison(p.config_path), "the config file"});
  for (auto& path : p.protected_paths)
    if (!path.empty())
      prot.push_back({resolve_for_comparison(path), "the protected path (sandbox.protected_paths)"});
  for (auto& path : extra_protected) {
    if (path.empty()) continue;
    bool git = std::filesystem::path(path).filename() == ".git";
    prot.push_back({resolve_for_comparison(path), git ? "a .git directory" : "a path the runtime protects"});
  }

  struct root_ref {
    const char* kind;
    const root_grant* grant;
    std::string resolved;
  };
  std::vector<root_ref> roots;
  for (auto& g : p.source_roots) roots.push_back({"source", &g, resolve_for_comparison(g.host_path)});
  for (auto& g : p.output_roots) roots.push_back({"output", &g, resolve_for_comparison(g.host_path)});
  for (auto& r : roots) add_git_at_or_above(r.resolved, prot);

  // The cheap comparisons first, so a root like "/" is refused before any scan.
  for (auto& r : roots)
    for (auto& pp : prot)
      if (within(r.resolved, pp.path) || within(pp.path, r.resolved))
        return exposed(r.kind, *r.grant, r.resolved, pp);
  for (auto& r : roots)
    if (auto git = find_nested_git(r.resolved))
      return exposed(r.kind, *r.grant, r.resolved, {resolve_for_comparison(*git), "a .git directory"});
  return ok();
}

} // namespace corral
