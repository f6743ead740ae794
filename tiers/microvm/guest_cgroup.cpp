#include "tiers/microvm/guest_cgroup.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace corral {

namespace {

bool write_text(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

std::string read_text(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

failure cgroup_failure(const std::string& what) {
  return make_failure(failure_kind::spawn_failed, "guest cgroup: " + what + ": " + std::strerror(errno) +
                                                      " (does the guest kernel have CONFIG_MEMCG and cgroup v2?)");
}

} // namespace

expected<guest_cgroup> guest_cgroup::create(const std::string& root, const guest_request& r) {
  // Controllers are enabled for the children of the root, then set on the job's own dir.
  if (!write_text(root + "/cgroup.subtree_control", "+memory +pids +cpu"))
    return cgroup_failure("enabling memory, pids and cpu in " + root + "/cgroup.subtree_control");
  guest_cgroup g;
  g.dir_ = root + "/job";
  g.procs_ = g.dir_ + "/cgroup.procs";
  if (::mkdir(g.dir_.c_str(), 0755) < 0 && errno != EEXIST) return cgroup_failure("mkdir " + g.dir_);
  if (r.memory_bytes) {
    if (!write_text(g.dir_ + "/memory.max", std::to_string(r.memory_bytes)))
      return cgroup_failure("writing memory.max");
    write_text(g.dir_ + "/memory.swap.max", "0");  // absent without swap support: nothing to limit
  }
  if (r.pids && !write_text(g.dir_ + "/pids.max", std::to_string(r.pids))) return cgroup_failure("writing pids.max");
  if (r.cpu_millicores) {
    // Quota per 100 ms period: 1500 millicores -> 150000 us.
    auto quota = std::to_string(r.cpu_millicores * 100) + " 100000";
    if (!write_text(g.dir_ + "/cpu.max", quota)) return cgroup_failure("writing cpu.max");
  }
  return g;
}

void guest_cgroup::kill_all() const {
  if (!dir_.empty()) write_text(dir_ + "/cgroup.kill", "1");
}

void guest_cgroup::signal_all(int sig) const {
  if (dir_.empty()) return;
  auto procs = read_text(procs_);
  std::size_t pos = 0;
  while (pos < procs.size()) {
    auto end = procs.find('\n', pos);
    if (end == std::string::npos) end = procs.size();
    long pid = std::strtol(procs.c_str() + pos, nullptr, 10);
    if (pid > 1) ::kill(static_cast<pid_t>(pid), sig);
    pos = end + 1;
  }
}

long guest_cgroup::oom_kills() const {
  if (dir_.empty()) return 0;
  auto events = read_text(dir_ + "/memory.events");
  auto at = events.find("oom_kill ");
  return at == std::string::npos ? 0 : std::strtol(events.c_str() + at + 9, nullptr, 10);
}

} // namespace corral
