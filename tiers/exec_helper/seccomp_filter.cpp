#include "tiers/exec_helper/seccomp_filter.hpp"

#include <cerrno>
#include <cstring>
#include <linux/seccomp.h>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>

#include "tiers/exec_helper/status_writer.hpp"

namespace corral::helper {

int install_seccomp_filter(const jail_spec& spec, int* listener) {
  sock_fprog prog = seccomp_program(spec.seccomp, spec.seccomp_kill);
  unsigned flags = listener ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
  long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (rc < 0) {
    report_failed(errno, "seccomp", std::string("seccomp(SECCOMP_SET_MODE_FILTER): ") + std::strerror(errno));
    return errno;
  }
  if (listener) *listener = static_cast<int>(rc);
  return 0;
}

} // namespace corral::helper
