#include "tiers/exec_helper/seccomp_filter.hpp"

#include <cerrno>
#include <cstring>
#include <linux/seccomp.h>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>

#include "tiers/exec_helper/status_writer.hpp"

namespace corral::helper {

int install_seccomp_filter(const jail_spec& spec) {
  const sock_filter* program = spec.seccomp_kill ? kSeccompKill : kSeccompErrno;
  unsigned short length = spec.seccomp_kill ? kSeccompKillLength : kSeccompErrnoLength;
  sock_fprog prog{length, const_cast<sock_filter*>(program)};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
    report_failed(errno, "seccomp", std::string("seccomp(SECCOMP_SET_MODE_FILTER): ") + std::strerror(errno));
    return errno;
  }
  return 0;
}

} // namespace corral::helper
