#include "tiers/exec_helper/workspace_enter.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tiers/exec_helper/confinement.hpp"
#include "tiers/exec_helper/jail_launcher.hpp"
#include "tiers/exec_helper/status_writer.hpp"
#include "tiers/exec_helper/target_supervisor.hpp"
#include "tiers/exec_helper/user_namespace.hpp"
#include "tiers/jail/process_start.hpp"

namespace corral::helper {

namespace {

using clock = std::chrono::steady_clock;

// The holder's init as a pidfd, checked to be the process the holder reported.
int open_holder(const jail_spec& spec) {
  auto pid = static_cast<pid_t>(spec.enter_pid);
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) {
    report_failed(errno, "enter", "the workspace's holder (pid " + std::to_string(pid) + ") is gone");
    return -1;
  }
  // Checked after the pidfd pins the process: a pid reused before pidfd_open shows another
  // start time here, one reused after cannot be, since the pidfd names the process.
  auto started = process_start_time(pid);
  if (!started || *started != spec.enter_start_time) {
    ::close(fd);
    report_failed(ESRCH, "enter", "the workspace's holder (pid " + std::to_string(pid) +
                                      ") is gone; its pid now names another process");
    return -1;
  }
  return fd;
}

// C': a process of the workspace, confined before its program starts.
int entered_step(const jail_spec& spec) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (int err = limit_and_confine(spec)) return err;
  return supervise_target(spec, {});
}

} // namespace

int run_entered(const jail_spec& spec) {
  if (int err = begin_helper(spec)) return err;

  // Before anything of the workspace can see this process: its programs run as the uid
  // this helper shows there (an unprivileged runtime maps its own), and a dumpable process
  // of that uid could be traced, or its /proc files opened, from inside.
  auto t = clock::now();
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) return step_error("enter", "prctl DUMPABLE"), 125;
  int holder = open_holder(spec);
  if (holder < 0) return 125;
  int kinds = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (!spec.share_network) kinds |= CLONE_NEWNET;
  int rc = ::setns(holder, kinds);
  ::close(holder);
  if (rc < 0) return step_error("enter", "setns into the workspace's namespaces"), 125;
  // setns of a mount namespace puts root and cwd at its root: the holder's view.
  if (::chdir("/") < 0) return step_error("enter", "chdir to the workspace's root"), 125;
  report_step("enter", t);

  // The fork is the first process in the workspace's pid namespace.
  pid_t child = ::fork();
  if (child < 0) return step_error("enter", "fork into the workspace"), 125;
  if (child == 0) _exit(entered_step(spec));
  release_stdio();  // C' holds the step's stdio; H only relays
  return relay_until_exit(child, spec);
}

} // namespace corral::helper
