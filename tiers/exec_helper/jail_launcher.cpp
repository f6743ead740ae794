#include "tiers/exec_helper/jail_launcher.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tiers/exec_helper/cgroup_join.hpp"
#include "tiers/exec_helper/confinement.hpp"
#include "tiers/exec_helper/egress_listeners.hpp"
#include "tiers/exec_helper/filesystem_view.hpp"
#include "tiers/exec_helper/idmapped_roots.hpp"
#include "tiers/exec_helper/seccomp_filter.hpp"
#include "tiers/exec_helper/spec_frames.hpp"
#include "tiers/exec_helper/status_writer.hpp"
#include "tiers/exec_helper/target_supervisor.hpp"
#include "tiers/exec_helper/user_namespace.hpp"
#include "tiers/jail/process_start.hpp"

namespace corral::helper {

namespace {

using clock = std::chrono::steady_clock;

// After relaying SIGTERM, how long H trusts C to end the jail before killing it (which
// kills the whole pid namespace).
constexpr auto kInitMargin = std::chrono::seconds(5);

// An empty network namespace still has a loopback device, down: bring it up so programs
// that talk to themselves over 127.0.0.1 work. Nothing else exists to reach.
int loopback_up() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return step_error("loopback", "socket");
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  int rc = ::ioctl(fd, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    rc = ::ioctl(fd, SIOCSIFFLAGS, &ifr);
  }
  int err = errno;
  ::close(fd);
  if (rc < 0) {
    errno = err;
    return step_error("loopback", "bring lo up");
  }
  return 0;
}

// A warm jail's C, armed: waits for the launch frame and takes its program, argv, env,
// cwd and grace; everything else stays as armed. EOF means the runtime retired the jail.
int await_launch(jail_spec& spec, bool& retired) {
  std::string bytes;
  auto got = read_frame(kSpecFd, bytes);
  ::close(kSpecFd);
  if (got == frame_read::eof) return retired = true, 0;
  if (got == frame_read::broken) return step_error("launch", "reading the launch on fd 3");
  auto launch = parse_jail_spec(bytes);
  if (!launch) {
    report_failed(EINVAL, "launch", launch.error().message);
    return EINVAL;
  }
  apply_launch(spec, *launch);
  return 0;
}

// A workspace holder's C: pid 1 of the workspace, confined like any jail's init, reaps
// what executions leave behind (they reparent to it) until the runtime ends the
// workspace; its exit then makes the kernel kill every process left in the namespace.
// Signals from inside (same uid) are blocked and ignored: only H, outside, is heard.
int hold_workspace() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
  for (;;) {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    siginfo_t info{};
    timespec wait{1, 0};
    int sig = ::sigtimedwait(&set, &info, &wait);
    if (sig > 0 && sig != SIGCHLD && info.si_pid == 0) return 0;
  }
}

// C: pid 1 of the jail.
int jail_init(jail_spec spec, bool warm, const std::vector<int>& trees) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  auto began = clock::now();
  auto t = began;
  if (::sethostname(spec.hostname.data(), spec.hostname.size()) < 0)
    return step_error("hostname", "sethostname");
  report_step("hostname", t);

  t = clock::now();
  if (int err = build_filesystem_view(spec, trees)) return err;
  report_step("filesystem", t);

  if (!spec.share_network) {
    t = clock::now();
    if (int err = loopback_up()) return err;
    report_step("loopback", t);
    t = clock::now();
    if (int err = hand_over_egress_listeners(spec)) return err;
    if (!spec.egress_ports.empty()) report_step("egress", t);
  }

  // C confines itself before it starts (or, warm, waits for) the target, which inherits
  // the same credentials, Landlock domain and seccomp filter: a warm launch does no
  // confinement work, and the jail's init never holds more than the program it runs.
  if (int err = limit_and_confine(spec)) return err;

  if (spec.mode == jail_mode::hold) {
    release_stdio();
    report_step("armed", began);
    return hold_workspace();
  }
  if (warm) {
    // The runtime hands the jail out only after this line.
    report_step("armed", began);
    bool retired = false;
    if (int err = await_launch(spec, retired)) return err;
    if (retired) return 0;
  }
  return supervise_target(spec, {});
}

// H of a holder: names C to the runtime while C cannot yet have been reaped (H is its
// parent and reaps only at the end), so the pid and start time name C for good. A root
// runtime also shields C from the OOM killer: it is pid 1 of the workspace, and its death
// ends every process in it (an unprivileged one may not lower the score; C then keeps 0).
void report_holder(pid_t init) {
  auto started = process_start_time(init);
  std::string adj = "/proc/" + std::to_string(init) + "/oom_score_adj";
  int fd = ::open(adj.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)!::write(fd, "-1000", 5);
    ::close(fd);
  }
  if (started) report_holding(init, *started);
  else report_failed(ESRCH, "hold", "the holder's init has no readable /proc/" + std::to_string(init) + "/stat");
}

} // namespace

int relay_until_exit(pid_t init, const jail_spec& spec) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
  bool relayed = false;
  clock::time_point kill_at{};
  for (;;) {
    int status = 0;
    pid_t done = ::waitpid(init, &status, WNOHANG);
    if (done == init) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + WTERMSIG(status);
    }
    if (done < 0 && errno != EINTR) return 125;
    if (relayed && clock::now() >= kill_at) ::kill(init, SIGKILL);
    timespec wait{0, 50'000'000};
    int sig = ::sigtimedwait(&set, nullptr, &wait);
    if (sig > 0 && sig != SIGCHLD && !relayed) {
      ::kill(init, SIGTERM);
      relayed = true;
      kill_at = clock::now() + std::chrono::milliseconds(spec.kill_grace_ms) + kInitMargin;
    }
  }
}

int begin_helper(const jail_spec& spec) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
  sigprocmask(SIG_BLOCK, &set, nullptr);

  auto t = clock::now();
  if (join_cgroups(spec) || drop_supplementary_groups()) return 125;
  report_step("cgroup", t);
  return 0;
}

int run_jailed(const jail_spec& spec, bool warm) {
  if (int err = begin_helper(spec)) return err;

  // Idmapped roots are made here, in the host's user namespace, where the kernel lets this
  // (root) helper idmap the host's filesystems; the jail's init inherits the fds.
  auto t = clock::now();
  std::vector<int> trees;
  if (prepare_idmapped_trees(spec, trees)) return 125;
  report_step("idmap", t);

  int sync[2];
  if (::pipe2(sync, O_CLOEXEC) < 0) return step_error("clone", "pipe"), 125;
  t = clock::now();
  unsigned long flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS |
                        CLONE_NEWCGROUP | SIGCHLD;
  if (!spec.share_network) flags |= CLONE_NEWNET;
  // Raw clone: fork-like (a copy of this single-threaded process), with new namespaces.
  long pid = ::syscall(SYS_clone, flags, nullptr, nullptr, nullptr, nullptr);
  if (pid < 0) {
    step_error("clone", "clone into new namespaces");
    return 125;
  }
  if (pid == 0) {
    ::close(sync[1]);
    char go = 0;
    ssize_t n;
    do n = ::read(sync[0], &go, 1);
    while (n < 0 && errno == EINTR);
    ::close(sync[0]);
    if (n != 1) _exit(125);  // the helper failed to map our ids: start nothing
    _exit(jail_init(spec, warm, trees));
  }
  close_trees(trees);  // the jail's init holds its own copies
  ::close(sync[0]);
  if (warm) ::close(kSpecFd);  // the launch is C's to read; EOF must reach C alone
  pid_t init = static_cast<pid_t>(pid);
  if (write_id_maps(init, spec) != 0) {
    ::close(sync[1]);
    ::kill(init, SIGKILL);
    ::waitpid(init, nullptr, 0);
    return 125;
  }
  ssize_t n = ::write(sync[1], "g", 1);
  ::close(sync[1]);
  if (n != 1) {
    ::kill(init, SIGKILL);
    ::waitpid(init, nullptr, 0);
    return step_error("clone", "release the jail's init"), 125;
  }
  report_step("namespaces", t);
  if (spec.mode == jail_mode::hold) report_holder(init);
  release_stdio();  // C holds the jail's stdio; H only relays
  return relay_until_exit(init, spec);
}

} // namespace corral::helper
