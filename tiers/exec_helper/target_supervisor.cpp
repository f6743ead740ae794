#include "tiers/exec_helper/target_supervisor.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "tiers/exec_helper/connect_broker.hpp"
#include "tiers/exec_helper/process_tree.hpp"
#include "tiers/exec_helper/status_writer.hpp"

namespace corral::helper {

namespace {

using clock = std::chrono::steady_clock;

// A SIGKILLed process normally dies at once; one stuck in uninterruptible sleep may not.
// The helper reports after this bound rather than hanging the execution forever.
constexpr auto kKillBound = std::chrono::seconds(5);

sigset_t supervised_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
  return set;
}

// What the target needs between the clone and its execve, all prepared by the helper
// beforehand: the child allocates nothing on its way to exec.
struct target_start {
  const jail_spec* spec = nullptr;
  const pre_exec_hook* before_exec = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  clock::time_point cloned_at;
};

[[noreturn]] void exec_target(const target_start& start) {
  const jail_spec& spec = *start.spec;
  // Undo the helper's signal set-up: the target starts with default dispositions and
  // nothing blocked, as if started by a shell.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);

  // A session of its own: no controlling terminal of the caller's to inject input into
  // (TIOCSTI), and its descendants cannot join a process group outside it.
  if (::setsid() < 0) {
    report_failed(errno, "setsid", std::strerror(errno));
    _exit(127);
  }
  if (spec.controlling_tty && ::ioctl(0, TIOCSCTTY, 0) < 0) {
    report_failed(errno, "tiocsctty", std::string("making the pty the controlling terminal: ") +
                                          std::strerror(errno));
    _exit(127);
  }
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) < 0) {
    report_failed(errno, "chdir", "cannot enter " + spec.cwd + ": " + std::strerror(errno));
    _exit(127);
  }
  if (*start.before_exec) {
    if (int err = (*start.before_exec)(); err != 0) _exit(127);
  }
  // From the clone to here: the session, the working directory and the caller's hook (a
  // jail's target inherits its confinement from C; host mode joins the cgroups here).
  report_step("prepare", start.cloned_at);
  ::execve(spec.program.c_str(), start.argv, start.envp);
  report_failed(errno, "exec", spec.program + ": " + std::strerror(errno));
  _exit(127);
}

int target_main(void* arg) { exec_target(*static_cast<const target_start*>(arg)); }

// The target shares the helper's memory until its execve (CLONE_VM | CLONE_VFORK, as
// posix_spawn does): no page tables to copy and no copy-on-write faults in either process,
// which cost milliseconds on a slow VM. The helper is suspended meanwhile, so nothing
// changes under the child, and after the execve the program has an address space of its
// own: it never sees the helper's memory.
pid_t clone_target(const target_start& start) {
  constexpr std::size_t kStackBytes = 256 * 1024;
  void* stack = ::mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -1;
  pid_t pid = ::clone(target_main, static_cast<char*>(stack) + kStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD,
                      const_cast<target_start*>(&start));
  int saved = errno;
  ::munmap(stack, kStackBytes);  // the child has exec'd or exited by now
  errno = saved;
  return pid;
}

// Reaps every child that has exited; returns true once the helper has no children left.
bool reap(pid_t target, int& target_status, bool& target_reaped) {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid == 0) return false;
    if (pid < 0) return errno == ECHILD;
    if (pid == target) {
      target_status = status;
      target_reaped = true;
    }
  }
}

bool wait_signal(const sigset_t& set, std::chrono::milliseconds timeout, int& sig, pid_t& sender) {
  timespec ts{};
  ts.tv_sec = timeout.count() / 1000;
  ts.tv_nsec = (timeout.count() % 1000) * 1'000'000;
  siginfo_t info{};
  sig = ::sigtimedwait(&set, &info, &ts);
  sender = info.si_pid;
  return sig > 0;
}

// As wait_signal, while the connect broker's notifications are answered as they come (the
// supervised signals are blocked, so they queue on `signals`, a signalfd).
bool wait_signal_or_serve(int signals, connect_broker& broker, std::chrono::milliseconds timeout, int& sig,
                          pid_t& sender) {
  pollfd p[2] = {{signals, POLLIN, 0}, {broker.fd(), POLLIN, 0}};
  if (::poll(p, broker.fd() >= 0 ? 2 : 1, static_cast<int>(timeout.count())) <= 0) return false;
  if (p[1].revents) broker.serve();
  if (!(p[0].revents & POLLIN)) return false;
  signalfd_siginfo info{};
  if (::read(signals, &info, sizeof info) != sizeof info) return false;
  sig = static_cast<int>(info.ssi_signo);
  sender = static_cast<pid_t>(info.ssi_pid);
  return true;
}

std::uint64_t to_us(const timeval& tv) {
  return static_cast<std::uint64_t>(tv.tv_sec) * 1'000'000 + static_cast<std::uint64_t>(tv.tv_usec);
}

} // namespace

void release_stdio() {
  int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd <= 2; ++fd) {
    if (null_fd >= 0) ::dup2(null_fd, fd);
    else ::close(fd);
  }
  if (null_fd > 2) ::close(null_fd);
}

int supervise_target(const jail_spec& spec, const pre_exec_hook& before_exec, connect_broker* broker,
                     target_ending* ending) {
  sigset_t set = supervised_signals();
  sigprocmask(SIG_BLOCK, &set, nullptr);
  const bool in_own_pid_namespace = ::getpid() == 1;
  signal(SIGPIPE, SIG_IGN);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

  std::vector<char*> argv, envp;
  for (auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : spec.envp) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  target_start start{&spec, &before_exec, argv.data(), envp.data(), clock::now()};
  pid_t target = clone_target(start);
  if (target < 0) {
    report_failed(errno, "fork", std::strerror(errno));
    report_exited(127 << 8, 0, 0, 0, false);
    return 127;
  }
  release_stdio();
  // Without it (the target failed before its filter, and said why) no connect can come.
  if (broker) broker->receive_listener();
  int signals = broker && broker->fd() >= 0 ? ::signalfd(-1, &set, SFD_CLOEXEC) : -1;
  report_started(target);

  enum class phase { running, draining, killing } now = phase::running;
  bool terminated = false;
  bool target_reaped = false;
  int target_status = 0;
  auto grace = std::chrono::milliseconds(spec.kill_grace_ms);
  clock::time_point phase_deadline{};

  auto begin_drain = [&] {
    // The target's own group and every descendant get SIGTERM first, so a server can
    // flush; whatever is left at the end of the grace gets SIGKILL.
    now = phase::draining;
    signal_tree(::getpid(), target, SIGTERM);
    phase_deadline = clock::now() + grace;
  };
  auto begin_kill = [&] {
    now = phase::killing;
    phase_deadline = clock::now() + kKillBound;
  };

  bool ending_seen = false;
  for (;;) {
    bool no_children = reap(target, target_status, target_reaped);
    if (target_reaped && !ending_seen) {
      ending_seen = true;
      if (ending)
        ending->by_itself = now == phase::running && !terminated && WIFEXITED(target_status) &&
                            WEXITSTATUS(target_status) < 125;
    }
    if (no_children) break;
    // In a workspace, asked to: what the program leaves behind lives on in the workspace
    // (it reparents to the holder's init once this process exits).
    if (now == phase::running && target_reaped && spec.leave_running) break;
    if (now == phase::running && target_reaped) begin_drain();
    if (now == phase::draining && clock::now() >= phase_deadline) begin_kill();
    if (now == phase::killing) {
      // Repeat until empty: a process can fork between the walk and the kill.
      signal_tree(::getpid(), target, SIGKILL);
      if (clock::now() >= phase_deadline) break;
    }

    std::chrono::milliseconds wait{1000};
    if (now == phase::draining) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(phase_deadline - clock::now());
      wait = std::max(std::chrono::milliseconds(1), left);
    } else if (now == phase::killing) {
      wait = std::chrono::milliseconds(5);
    }
    int sig = 0;
    pid_t sender = 0;
    bool signalled = signals >= 0 ? wait_signal_or_serve(signals, *broker, wait, sig, sender)
                                  : wait_signal(set, wait, sig, sender);
    if (!signalled) continue;
    if (sig == SIGCHLD) continue;
    // A jail's init (pid 1) runs as the program's uid, so the program may signal it; only
    // a sender outside the pid namespace (H relaying the runtime: si_pid 0 here) ends the
    // execution.
    // A step entering a workspace is not pid 1, but the same holds: its parent relays from
    // outside the workspace's pid namespace, every sender inside is the workspace's.
    if ((in_own_pid_namespace || spec.mode == jail_mode::enter) && sender != 0) continue;
    // SIGTERM/SIGINT/SIGHUP/SIGQUIT: the runtime (or the runtime's death, through
    // PR_SET_PDEATHSIG) asks for the execution to end.
    terminated = true;
    if (now == phase::running) begin_drain();
  }

  if (signals >= 0) ::close(signals);
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  if (!target_reaped) target_status = SIGKILL;  // stuck past the kill bound
  report_exited(target_status, static_cast<std::uint64_t>(usage.ru_maxrss), to_us(usage.ru_utime),
                to_us(usage.ru_stime), terminated);
  return 0;
}

} // namespace corral::helper
