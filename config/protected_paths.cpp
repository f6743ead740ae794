#include "config/protected_paths.hpp"

#include <filesystem>
#include <sys/stat.h>

namespace corral {

namespace fs = std::filesystem;

namespace {

struct protected_path {
  std::string path;  // resolved
  std::string what;  // for the message: "the config file", "a .git directory", ...
  mask_kind kind = mask_kind::hidden;
};

// True when `inner` is `outer` or lies below it; both resolved.
bool within(const std::string& inner, const std::string& outer) {
  if (inner == outer) return true;
  if (outer == "/") return true;
  return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
         inner[outer.size()] == '/';
}

bool exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

protected_path git_at(const std::string& path) {
  return {resolve_for_comparison(path), "a .git directory", mask_kind::read_only};
}

// .git directories at or above `dir`: a root inside one (say .git/hooks) exposes it.
void add_git_at_or_above(const std::string& dir, std::vector<protected_path>& out) {
  for (fs::path d = dir;; d = d.parent_path()) {
    if (is_dir(d / ".git")) out.push_back(git_at((d / ".git").string()));
    if (d == d.parent_path() || d.empty()) break;
  }
}

// The .git directories below `root`, within the scan bounds. Symlinks are not followed:
// inside the boundary a symlink resolves in the child's view, not the host's.
void add_nested_git(const std::string& root, std::vector<protected_path>& out) {
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  std::size_t visited = 0;
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (++visited > kGitScanEntries) break;
    const auto& entry = *it;
    std::error_code type_ec;
    bool dir = entry.is_directory(type_ec) && !entry.is_symlink(type_ec);
    if (!dir) continue;
    if (entry.path().filename() == ".git") {
      out.push_back(git_at(entry.path().string()));
      it.disable_recursion_pending();  // the mask covers everything below
      continue;
    }
    if (it.depth() + 1 >= kGitScanDepth) it.disable_recursion_pending();
  }
}

struct root_ref {
  const char* kind;
  const root_grant* grant;
  std::string resolved;
};

failure refused(const root_ref& r, const protected_path& prot, const std::string& relation, const std::string& why) {
  return make_failure(failure_kind::config_error, std::string(r.kind) + " root '" + r.resolved + "' (seen at " +
                                                      r.grant->virtual_path + ") " + relation + " " + prot.what +
                                                      " '" + prot.path + "' (symlinks resolved): " + why);
}

const char* const kWholeRoot =
    "a mask there would cover the whole root; narrow the root so it leaves that path out";

// True when another root is mounted at or above `inside` and below `owner`'s own inside
// path: that root covers the place, so the owner's content there is not in the view.
bool shadowed(const std::string& inside, const root_grant& owner, const std::vector<root_ref>& roots) {
  for (auto& r : roots)
    if (r.grant != &owner && within(inside, r.grant->virtual_path) &&
        r.grant->virtual_path.size() > owner.virtual_path.size() && within(r.grant->virtual_path, owner.virtual_path))
      return true;
  return false;
}

void add_mask(profile& p, path_mask m) {
  for (auto& have : p.masks)
    if (have.virtual_path == m.virtual_path) return;
  p.masks.push_back(std::move(m));
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

status mask_protected(profile& p, const std::vector<std::string>& extra_protected) {
  std::vector<protected_path> prot;
  if (!p.config_path.empty()) prot.push_back({resolve_for_comparison(p.config_path), "the config file"});
  for (auto& path : p.protected_paths)
    if (!path.empty())
      prot.push_back({resolve_for_comparison(path), "the protected path (sandbox.protected_paths)"});
  for (auto& path : extra_protected) {
    if (path.empty()) continue;
    if (fs::path(path).filename() == ".git") {
      // Only a .git that is there: a message must never claim one exists.
      if (is_dir(path)) prot.push_back(git_at(path));
    } else {
      prot.push_back({resolve_for_comparison(path), "a path the runtime protects"});
    }
  }

  std::vector<root_ref> roots;
  for (auto& g : p.source_roots) roots.push_back({"source", &g, resolve_for_comparison(g.host_path)});
  for (auto& g : p.output_roots) roots.push_back({"output", &g, resolve_for_comparison(g.host_path)});
  // The cheap comparisons first, so a root like "/" is refused before any scan.
  for (auto& r : roots)
    for (auto& pp : prot)
      if (within(r.resolved, pp.path))
        return refused(r, pp, r.resolved == pp.path ? "is" : "lies inside", kWholeRoot);
  for (auto& r : roots) {
    add_git_at_or_above(r.resolved, prot);
    add_nested_git(r.resolved, prot);
  }

  for (auto& r : roots) {
    for (auto& pp : prot) {
      if (within(r.resolved, pp.path))  // a .git at or above this root, found by the scan
        return refused(r, pp, r.resolved == pp.path ? "is" : "lies inside", kWholeRoot);
      if (!within(pp.path, r.resolved)) continue;
      if (!exists(pp.path)) {
        if (!r.grant->writable) continue;  // absent and cannot be created: nothing to cover
        return refused(r, pp, "is writable and holds the place of",
                       "that path does not exist, so no mount can cover it and the program could create it; "
                       "create it first, or narrow the root");
      }
      std::string inside = r.grant->virtual_path + pp.path.substr(r.resolved.size());
      if (shadowed(inside, *r.grant, roots)) continue;
      add_mask(p, {pp.path, inside, pp.kind, pp.what});
    }
  }
  return ok();
}

} // namespace corral
