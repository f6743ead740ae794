#include "tiers/jail/system_view.hpp"

#include <sys/stat.h>

namespace corral {

const std::vector<std::string>& system_dirs() {
  static const std::vector<std::string> dirs = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
  return dirs;
}

const std::vector<std::string>& etc_essentials() {
  static const std::vector<std::string> files = {
      "/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
      "/etc/passwd",       "/etc/group",       "/etc/nsswitch.conf", "/etc/hosts",
      "/etc/host.conf",    "/etc/gai.conf",    "/etc/localtime",  "/etc/protocols",
      "/etc/services",     "/etc/mime.types",  "/etc/ssl",        "/etc/ca-certificates",
      "/etc/python3",      "/etc/python3.11",  "/etc/timezone",
  };
  return files;
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

bool is_under(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

std::string visible_in_view(const std::string& host_path, const std::vector<root_grant>& source_roots,
                            const std::vector<root_grant>& output_roots) {
  for (auto& dir : system_dirs())
    if (is_under(host_path, dir)) return host_path;
  for (auto* roots : {&source_roots, &output_roots})
    for (auto& r : *roots)
      if (is_under(host_path, r.host_path)) return r.virtual_path + host_path.substr(r.host_path.size());
  return "";
}

std::string visible_search_path(const std::string& search_path, const std::vector<root_grant>& source_roots,
                                const std::vector<root_grant>& output_roots) {
  // An entry outside the view (a version manager's shims in a home dir) would resolve to a
  // program that is not there.
  std::string out;
  for (std::size_t start = 0; start <= search_path.size();) {
    auto end = search_path.find(':', start);
    if (end == std::string::npos) end = search_path.size();
    auto dir = search_path.substr(start, end - start);
    start = end + 1;
    if (!dir.empty() && dir.front() == '/' && visible_in_view(dir, source_roots, output_roots) == dir)
      out += (out.empty() ? "" : ":") + dir;
  }
  return out;
}

std::map<std::string, std::string> jail_default_environment(const std::string& visible_caller_path) {
  static const char* const kStandard[] = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"};
  std::string path = visible_caller_path;
  for (const char* dir : kStandard) {
    bool listed = false;
    for (std::size_t start = 0; start <= visible_caller_path.size();) {
      auto end = visible_caller_path.find(':', start);
      if (end == std::string::npos) end = visible_caller_path.size();
      listed = listed || visible_caller_path.compare(start, end - start, dir) == 0;
      start = end + 1;
    }
    if (!listed) path += (path.empty() ? "" : ":") + std::string(dir);
  }
  return {{"PATH", path}, {"HOME", "/tmp"}, {"TMPDIR", "/tmp"}, {"LANG", "C.UTF-8"}};
}

std::map<std::string, std::string> with_jail_defaults(std::map<std::string, std::string> env,
                                                      const std::string& visible_caller_path) {
  for (auto& [k, v] : jail_default_environment(visible_caller_path)) env.emplace(k, v);
  return env;
}

} // namespace corral
