#include "tiers/cgroups/cgroup_files.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <unistd.h>

namespace corral::cgroupfs {

const char* const kDelegateHint =
    "run as root, or delegate a cgroup v2 subtree with the memory, pids and cpu controllers "
    "to this user (systemd-run --user --scope -p Delegate=yes corral ...)";

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }


std::optional<std::string> read_small(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

// Kernel files take one write(2) each; a short or failed write is the kernel's verdict.
int write_small(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int err = 0;
  ssize_t n;
  do n = ::write(fd, value.data(), value.size());
  while (n < 0 && errno == EINTR);
  if (n < 0) err = errno;
  ::close(fd);
  return err;
}

failure access_failure(const std::string& what, int err) {
  std::string msg = what + ": " + std::strerror(err);
  if (err == EACCES || err == EPERM || err == EROFS) msg += "; " + std::string(kDelegateHint);
  return make_failure(failure_kind::tier_unavailable, msg);
}

status write_limit(const std::string& path, const std::string& value) {
  if (int err = write_small(path, value)) return access_failure("write \"" + value + "\" to " + path, err);
  return ok();
}

// "key value" lines (cpu.stat, memory.events, pids.events, memory.oom_control).
std::optional<std::uint64_t> keyed(const std::string& path, const std::string& key) {
  auto text = read_small(path);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  for (std::string k, v; in >> k >> v;)
    if (k == key) return std::strtoull(v.c_str(), nullptr, 10);
  return std::nullopt;
}

std::optional<std::uint64_t> number(const std::string& path) {
  auto text = read_small(path);
  if (!text || text->empty() || !std::isdigit(static_cast<unsigned char>((*text)[0]))) return std::nullopt;
  return std::strtoull(text->c_str(), nullptr, 10);
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

} // namespace corral::cgroupfs
