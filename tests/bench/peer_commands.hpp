// The peers corral's benchmarks measure against, each asked for a boundary as close to the
// landlock tier's as its options allow: the system dirs read-only, a fresh /proc, a minimal
// /dev, a private /tmp, no network, every namespace it can make.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace corral::bench {

// The first of `candidates` that is executable, then `name` on PATH; "" when none is.
inline std::string find_program(const std::string& name, std::vector<std::string> candidates = {}) {
  if (const char* path = std::getenv("PATH")) {
    std::string dirs = path;
    for (std::size_t at = 0; at <= dirs.size();) {
      auto colon = dirs.find(':', at);
      auto dir = dirs.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
      if (!dir.empty()) candidates.push_back(dir + "/" + name);
      if (colon == std::string::npos) break;
      at = colon + 1;
    }
  }
  for (const auto& c : candidates)
    if (::access(c.c_str(), X_OK) == 0) return c;
  return "";
}

// bubblewrap with every namespace unshared and a comparable read-only view.
inline std::vector<std::string> bwrap_argv(const std::string& bwrap, const std::vector<std::string>& program) {
  std::vector<std::string> a = {bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                                "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
                                "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"};
  for (const char* dir : {"/bin", "/lib", "/lib64", "/sbin"}) {
    std::error_code ec;
    if (std::filesystem::is_symlink(dir, ec))
      a.insert(a.end(), {"--symlink", std::filesystem::read_symlink(dir, ec).string(), dir});
    else if (std::filesystem::is_directory(dir, ec))
      a.insert(a.end(), {"--ro-bind", dir, dir});
  }
  a.insert(a.end(), program.begin(), program.end());
  return a;
}

// firejail without a profile: no network, private /dev and /tmp, no new privileges, its
// default seccomp filter, every capability dropped. It keeps the host's root visible
// (firejail has no empty-root view), so its boundary is weaker than the other two.
inline std::vector<std::string> firejail_argv(const std::string& firejail, const std::vector<std::string>& program) {
  std::vector<std::string> a = {firejail, "--quiet", "--noprofile", "--net=none", "--private-dev", "--private-tmp",
                                "--nonewprivs", "--seccomp", "--caps.drop=all", "--"};
  a.insert(a.end(), program.begin(), program.end());
  return a;
}

// nsjail in one-shot mode with the same read-only view (when a build of it is on PATH or
// in $NSJAIL: Debian does not package it).
inline std::vector<std::string> nsjail_argv(const std::string& nsjail, const std::vector<std::string>& program) {
  std::vector<std::string> a = {nsjail, "-Mo", "--quiet", "--disable_rlimits", "-R", "/usr", "-R", "/etc",
                                "-R", "/lib", "-R", "/lib64", "-R", "/bin", "-T", "/tmp", "--"};
  a.insert(a.end(), program.begin(), program.end());
  return a;
}

} // namespace corral::bench
