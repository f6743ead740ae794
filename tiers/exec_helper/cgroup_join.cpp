#include "tiers/exec_helper/cgroup_join.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

#include "tiers/exec_helper/status_writer.hpp"

namespace corral::helper {

namespace {

int join_error(const std::string& what) {
  int err = errno ? errno : EINVAL;
  report_failed(err, "cgroup", what + ": " + std::strerror(err));
  return err;
}

} // namespace

// "0" names the writer itself: writing a pid into cgroup.procs takes the kernel's global
// threadgroup lock and waits out an RCU grace period (8-20 ms here), while a thread moving
// itself through v1 `tasks` skips it. The caller is single-threaded, so moving its one
// thread moves the process, and everything it forks is born inside.
int join_cgroups(const jail_spec& spec) {
  for (auto& file : spec.cgroup_procs) {
    int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return join_error("open " + file);
    ssize_t n = ::write(fd, "0", 1);
    int err = errno;
    ::close(fd);
    if (n != 1) {
      errno = n < 0 ? err : EIO;
      return join_error("join " + file);
    }
  }
  return 0;
}

} // namespace corral::helper
