#include "config/root_layout.hpp"

#include <filesystem>
#include <sys/stat.h>
#include <vector>

namespace corral {

namespace fs = std::filesystem;

namespace {

// Kept here rather than taken from tiers/system_view: configuration must not depend on the
// tiers. The view shows these read-only from the host (system_dirs and etc_essentials).
const std::vector<std::string> kSystemDirs = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"};
// Host directories a program must never write to, whatever the view shows.
const std::vector<std::string> kHostSystemDirs = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                                                  "/etc", "/boot", "/proc", "/sys", "/dev", "/var/lib"};

bool under(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

std::vector<const root_grant*> all_roots(const profile& p) {
  std::vector<const root_grant*> out;
  for (auto* list : {&p.source_roots, &p.output_roots})
    for (auto& g : *list) out.push_back(&g);
  return out;
}

// `rel` (a/b) below `dir` on the host, without passing a symlink: the mount point an inner
// root needs in its outer root.
std::optional<std::string> mount_point_problem(const std::string& dir, const std::string& rel, bool want_dir) {
  std::string at = dir;
  std::size_t start = 0;
  while (start < rel.size()) {
    auto slash = rel.find('/', start);
    if (slash == std::string::npos) slash = rel.size();
    at += "/" + rel.substr(start, slash - start);
    start = slash + 1;
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0) return at + " does not exist";
    if (S_ISLNK(st.st_mode)) return at + " is a symlink";
    bool last = start >= rel.size();
    if ((!last || want_dir) && !S_ISDIR(st.st_mode)) return at + " is not a directory";
    if (last && !want_dir && S_ISDIR(st.st_mode)) return at + " is a directory, the inner root a file";
  }
  return std::nullopt;
}

bool host_is_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

} // namespace

bool is_scratch_place(const std::string& inside) { return inside == "/work" || inside == "/tmp"; }

std::optional<std::string> inside_path_problem(const std::string& v, std::string& normalized) {
  if (v.empty() || v[0] != '/') return "the inside path must be absolute";
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= v.size()) {
    auto end = v.find('/', start);
    if (end == std::string::npos) end = v.size();
    auto part = v.substr(start, end - start);
    if (part == "." || part == "..") return "the inside path must not contain '.' or '..'";
    if (!part.empty()) parts.push_back(part);
    start = end + 1;
  }
  if (parts.empty()) return "the inside path must not be '/'";
  if (parts[0] == "proc" || parts[0] == "dev" || parts[0] == "sys")
    return "the inside path must not be under /proc, /dev or /sys (the boundary's own kernel filesystems)";
  normalized.clear();
  for (auto& p : parts) normalized += "/" + p;
  if (normalized == "/work")
    return "the inside path must not be /work itself: that is the scratch dir, every program's working "
           "directory, which the root would shadow; choose a path below it, such as /work/src";
  if (normalized == "/tmp")
    return "the inside path must not be /tmp itself: that is the jail's private /tmp, which the root would "
           "shadow; choose a path below it or elsewhere";
  for (auto& dir : kSystemDirs)
    if (under(normalized, dir))
      return "the inside path must not be at or below " + dir +
             ": the view shows the host's system directories there, read-only; choose another path, such as /srv/" +
             parts.back();
  return std::nullopt;
}

expected<root_grant> resolve_root(const std::string& host, const std::string& inside, bool writable) {
  auto bad = [](const std::string& why) { return make_failure(failure_kind::config_error, why); };
  if (host.empty()) return bad("the host path is empty");
  std::error_code ec;
  auto canonical = fs::canonical(host, ec);
  if (ec) return bad("host path " + host + ": " + ec.message());
  auto status = fs::status(canonical, ec);
  if (ec || !(fs::is_directory(status) || fs::is_regular_file(status)))
    return bad("host path " + canonical.string() + " is neither a directory nor a regular file");
  root_grant g;
  g.host_path = canonical.string();
  g.writable = writable;
  if (writable) {
    if (g.host_path == "/") return bad("host path / cannot be writable");
    for (auto& dir : kHostSystemDirs)
      if (under(g.host_path, dir))
        return bad("host path " + g.host_path + " is a host system directory (" + dir +
                   "), which is never granted writable; grant it read-only, or a directory of your own");
  }
  if (auto problem = inside_path_problem(inside, g.virtual_path)) return bad(*problem);
  return g;
}

status check_root_layout(const profile& p) {
  auto roots = all_roots(p);
  for (std::size_t i = 0; i < roots.size(); ++i) {
    const auto& inner = *roots[i];
    for (std::size_t j = 0; j < roots.size(); ++j) {
      if (i == j) continue;
      const auto& outer = *roots[j];
      if (inner.virtual_path == outer.virtual_path) {
        if (j < i)
          return make_failure(failure_kind::config_error, "the roots " + outer.host_path + " and " + inner.host_path +
                                                              " are both at " + inner.virtual_path +
                                                              "; give each its own inside path");
        continue;
      }
      if (!under(inner.virtual_path, outer.virtual_path)) continue;
      auto rel = inner.virtual_path.substr(outer.virtual_path.size() + 1);
      std::optional<std::string> problem;
      if (!host_is_dir(outer.host_path)) problem = outer.host_path + " is a file";
      else problem = mount_point_problem(outer.host_path, rel, host_is_dir(inner.host_path));
      if (problem)
        return make_failure(failure_kind::config_error,
                            "the root " + inner.host_path + " at " + inner.virtual_path + " lies inside the root at " +
                                outer.virtual_path + ", whose host path holds no mount point for it (" + *problem +
                                "); the view never creates one in a host directory: create it, or choose "
                                "another inside path");
    }
  }
  if (!p.working_dir.empty()) {
    const auto& w = p.working_dir;
    if (w.empty() || w[0] != '/') return make_failure(failure_kind::config_error, "the working directory " + w + " must be an absolute inside path");
    bool found = is_scratch_place(w);
    const root_grant* holder = nullptr;  // the innermost root that shows it
    for (auto* r : roots)
      if (under(w, r->virtual_path) && (!holder || r->virtual_path.size() > holder->virtual_path.size())) holder = r;
    if (holder) {
      auto host = holder->host_path + w.substr(holder->virtual_path.size());
      if (!host_is_dir(host))
        return make_failure(failure_kind::config_error, "the working directory " + w + " is " + host +
                                                            " on the host, which is not a directory");
      found = true;
    }
    for (auto& dir : kSystemDirs) found = found || (under(w, dir) && host_is_dir(w));
    if (!found)
      return make_failure(failure_kind::config_error,
                          "the working directory " + w +
                              " is not in the view: it must be /work, /tmp, a system directory or inside a granted root");
  }
  return ok();
}

} // namespace corral
