#include "tiers/kernel_features.hpp"

#include <cerrno>
#include <cstring>
#include <linux/landlock.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tiers/cgroups/cgroup_detect.hpp"

namespace corral {

namespace {

void detect_landlock(kernel_features& f) {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi > 0) {
    f.landlock_abi = static_cast<int>(abi);
    return;
  }
  f.landlock_abi = 0;
  if (errno == ENOSYS)
    f.landlock_error = "this kernel was built without Landlock (CONFIG_SECURITY_LANDLOCK)";
  else if (errno == EOPNOTSUPP)
    f.landlock_error = "Landlock is built in but disabled: add 'landlock' to the lsm= boot parameter";
  else
    f.landlock_error = std::string("landlock_create_ruleset: ") + std::strerror(errno);
}

int leave_at_once(void*) { _exit(0); }

void detect_user_namespaces(kernel_features& f) {
  // A child created straight into a new user namespace answers the question without
  // changing this process. CLONE_VM | CLONE_VFORK: it shares our memory and runs only
  // _exit on a small stack (ours is suspended until it has), so nothing of this
  // (multithreaded, large) process is copied; a fork here cost ~2 ms of page-table
  // copying on every CLI start (issue 17).
  alignas(16) char stack[16 * 1024];
  pid_t pid = ::clone(leave_at_once, stack + sizeof stack, CLONE_VM | CLONE_VFORK | CLONE_NEWUSER | SIGCHLD, nullptr);
  if (pid < 0) {
    int err = errno;
    f.user_namespace_error = std::string("clone(CLONE_NEWUSER): ") + std::strerror(err) +
                             " (check kernel.unprivileged_userns_clone, user.max_user_namespaces "
                             "and AppArmor's restrict_unprivileged_userns)";
    return;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  f.user_namespaces = true;
}

} // namespace

kernel_features detect_kernel_features() {
  kernel_features f;
  utsname u{};
  if (::uname(&u) == 0) f.kernel_release = u.release;
  detect_landlock(f);
  f.seccomp = ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  long pidfd = ::syscall(SYS_pidfd_open, ::getpid(), 0);
  if (pidfd >= 0) {
    f.pidfd = true;
    ::close(static_cast<int>(pidfd));
  }
  detect_user_namespaces(f);
  detect_cgroups(f);
  return f;
}

} // namespace corral
