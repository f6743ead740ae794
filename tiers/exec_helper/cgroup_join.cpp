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

int join_cgroups(const jail_spec& spec) {
  auto pid = std::to_string(::getpid());
  for (auto& procs : spec.cgroup_procs) {
    int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return join_error("open " + procs);
    ssize_t n = ::write(fd, pid.data(), pid.size());
    int err = errno;
    ::close(fd);
    if (n != static_cast<ssize_t>(pid.size())) {
      errno = n < 0 ? err : EIO;
      return join_error("join " + procs);
    }
  }
  return 0;
}

} // namespace corral::helper
