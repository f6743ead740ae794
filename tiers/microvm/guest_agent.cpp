// corral-microvm-agent: the guest's /init. It opens its channel (a virtio-serial port, see
// guest_channel.hpp), receives one request from the launcher, runs it in a cgroup holding
// the request's limits, streams its output back in frames, reports how it ended and
// powers the VM off.
//
// It is PID 1: if it ever returned, the guest kernel would panic, so every path ends in
// power_off(). It is linked statically because the initramfs has no dynamic loader of
// its own beyond what busybox needs (busybox-static needs none either).
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <termios.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/write_all.hpp"
#include "tiers/microvm/guest_cgroup.hpp"
#include "tiers/microvm/guest_channel.hpp"
#include "tiers/microvm/guest_protocol.hpp"
#include "tiers/microvm/guest_trees.hpp"

using namespace corral;

namespace {

// The serial console: where a boot that fails before the channel opens is explained (the
// launcher shows what the guest printed there).
constexpr const char* kConsole = "/dev/ttyS0";
constexpr std::chrono::seconds kChannelBound{20};
constexpr std::chrono::seconds kLastFrameBound{30};
// Stop reading stdin from the channel while this much waits for the program to take it:
// the launcher and QEMU then hold the rest, so a program that never reads stdin cannot
// make the agent buffer without bound.
constexpr std::size_t kMaxPendingInput = 256 * 1024;

constexpr uid_t kNobody = 65534;

// The channel: the virtio port, both ways, in the guest. Run by hand outside a VM with
// --channel-stdio (the launcher tests do, through a stand-in VMM), it is stdin/stdout and
// nothing of the guest's own setup (mounts, cgroup, power-off) happens.
int channel = -1;
int channel_out = -1;
int console = -1;
bool in_guest = true;

[[noreturn]] void power_off() {
  if (!in_guest) ::_exit(0);
  ::sync();
  ::reboot(RB_POWER_OFF);
  // Power-off failed (no ACPI?): with -no-reboot a reset ends QEMU as well.
  ::reboot(RB_AUTOBOOT);
  for (;;) ::pause();
}

// The channel or the console gone: nobody is left to tell, so a failed write is dropped.
void write_or_drop(int fd, const std::string& bytes) { (void)write_all(fd, bytes); }

void send(frame_type type, const std::string& payload = "") { write_or_drop(channel_out, encode_frame(type, payload)); }

// After the last frame (exit or fatal). A write to a virtio port returns once the bytes
// are queued, not once QEMU has passed them on, and QEMU holds them while the launcher's
// pipe is full: powering off now could lose the last frames. The launcher ends QEMU as
// soon as it has read the last frame, so wait for that, dropping any stdin still in
// flight; power off only if it has not come within kLastFrameBound.
[[noreturn]] void end_after_last_frame() {
  auto deadline = std::chrono::steady_clock::now() + kLastFrameBound;
  while (in_guest && channel >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{channel, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    char buf[4096];
    ssize_t n = ::read(channel, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the host side closed: nobody is left to read
  }
  power_off();
}

[[noreturn]] void fatal(const std::string& why) {
  if (channel_out >= 0) {
    send(frame_type::fatal, why);
    end_after_last_frame();
  }
  if (console >= 0) {
    write_or_drop(console, "corral-microvm-agent: " + why + "\n");
    ::tcdrain(console);  // the console is a tty: this waits until the port has sent it
  }
  power_off();
}

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

void mount_basics() {
  // What a program expects to find; failures are reported, since a missing /proc is a
  // broken image rather than something to run without.
  struct step { const char* type; const char* target; const char* data; };
  const step steps[] = {
      {"devtmpfs", "/dev", "mode=0755"},
      {"proc", "/proc", nullptr},
      {"sysfs", "/sys", nullptr},
      {"tmpfs", "/tmp", "mode=1777"},
      {"cgroup2", "/sys/fs/cgroup", nullptr},
  };
  for (auto& s : steps) {
    ::mkdir(s.target, 0755);
    // Without /dev there is no console to report to, and fatal() only powers off.
    if (::mount(s.type, s.target, s.type, MS_NOSUID, s.data) < 0 && errno != EBUSY)
      fatal(errno_text(std::string("mount ") + s.type + " on " + s.target));
    if (std::strcmp(s.target, "/dev") == 0) console = ::open(kConsole, O_WRONLY | O_NOCTTY | O_CLOEXEC);
  }
}

// Terminal requests need ptys; without devpts only they fail (with the reason), so a
// kernel lacking it still runs everything else.
void mount_devpts() {
  ::mkdir("/dev/pts", 0755);
  ::mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "mode=0620,ptmxmode=0666");
}

// Reads frames from the channel until one arrives (blocking).
frame read_frame(frame_reader& in) {
  for (;;) {
    auto next = in.next();
    if (!next) fatal(next.error().message);
    if (*next) return std::move(**next);
    char buf[4096];
    ssize_t n = ::read(channel, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fatal("the channel closed before the request arrived");
    in.feed(buf, static_cast<std::size_t>(n));
  }
}

std::string search(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"}) {
    std::string p = std::string(dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return name;
}

struct child_pipes {
  int in = -1, out = -1, err = -1;
  int tty = -1;  // a terminal request: the pty's master (out and in are it too)
};

// A pty for a terminal request, its window set; the slave's name in `slave`.
int open_terminal(const guest_request& r, std::string& slave) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  char name[128];
  if (master < 0 || ::grantpt(master) < 0 || ::unlockpt(master) < 0 || ::ptsname_r(master, name, sizeof name) != 0)
    fatal(errno_text("a pty for the terminal request (is devpts in the guest kernel?)"));
  slave = name;
  winsize ws{};
  ws.ws_row = r.rows;
  ws.ws_col = r.cols;
  ::ioctl(master, TIOCSWINSZ, &ws);
  return master;
}

pid_t start_program(const guest_request& r, const std::string& cgroup_procs, child_pipes& p) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  std::string slave;
  int master = r.tty ? open_terminal(r, slave) : -1;
  if (!r.tty && (::pipe2(in, O_CLOEXEC) < 0 || ::pipe2(out, O_CLOEXEC) < 0 || ::pipe2(err, O_CLOEXEC) < 0))
    fatal(errno_text("pipe2"));
  std::vector<char*> argv, envp;
  for (auto& a : r.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : r.envp) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  std::string program = search(r.argv.front());
  pid_t pid = ::fork();
  if (pid < 0) fatal(errno_text("fork"));
  if (pid == 0) {
    // Join the job's cgroup before exec, so the program and all it forks are limited.
    if (!cgroup_procs.empty()) {
      int fd = ::open(cgroup_procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::write(fd, "0", 1) != 1) {
        (void)!::write(2, "corral-microvm-agent: cannot join the job cgroup\n", 49);
        _exit(126);
      }
      ::close(fd);
    }
    ::setsid();
    if (r.tty) {
      // Opened by the session leader: it becomes the controlling terminal (TIOCSCTTY says
      // so outright), and the descriptors stay usable once the program is nobody.
      int fd = ::open(slave.c_str(), O_RDWR | O_CLOEXEC);  // dup2 below gives 0-2 without it
      if (fd < 0 || ::ioctl(fd, TIOCSCTTY, 0) < 0) _exit(126);
      in[0] = out[1] = err[1] = fd;
    }
    // The program runs as nobody: only root (the agent) can open the channel port, so
    // the program cannot forge frames or talk to the launcher behind the agent's back.
    if (in_guest && (::setgroups(0, nullptr) < 0 || ::setgid(kNobody) < 0 || ::setuid(kNobody) < 0))
      _exit(126);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (::chdir(r.cwd.c_str()) < 0) {
      std::string msg = "corral-microvm-agent: chdir " + r.cwd + ": " + std::strerror(errno) + "\n";
      (void)!::write(2, msg.data(), msg.size());
      _exit(126);
    }
    ::execve(program.c_str(), argv.data(), envp.data());
    std::string msg = "corral-microvm-agent: cannot run " + program + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, msg.data(), msg.size());
    _exit(errno == ENOENT ? 127 : 126);
  }
  if (r.tty) {
    p = {::fcntl(master, F_DUPFD_CLOEXEC, 3), master, -1, master};
  } else {
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    p = {in[1], out[0], err[0], -1};
  }
  ::fcntl(p.in, F_SETFL, O_NONBLOCK);
  return pid;
}

std::uint64_t now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1'000'000;
}

// Runs the program to its end and returns how it ended. Output is forwarded as it comes.
guest_exit supervise(const guest_request& r, guest_cgroup& job, frame_reader& in) {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  int sigfd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0) fatal(errno_text("signalfd"));

  child_pipes p;
  pid_t main_pid = start_program(r, job.procs_file(), p);
  guest_exit result;
  bool main_done = false;
  bool input_open = true;
  std::string pending_input;
  // Input frames may have arrived with the request, already in `in`.
  auto take_input = [&] {
    for (;;) {
      auto next = in.next();
      if (!next) fatal(next.error().message);
      if (!*next) break;
      if ((*next)->type == frame_type::input) pending_input += (*next)->payload;
      else if ((*next)->type == frame_type::input_end) input_open = false;
      else if ((*next)->type == frame_type::resize && p.in >= 0 && r.tty) {
        auto size = decode_window((*next)->payload);
        if (!size) fatal(size.error().message);
        winsize ws{};
        ws.ws_row = size->first;
        ws.ws_col = size->second;
        ::ioctl(p.in, TIOCSWINSZ, &ws);  // the kernel sends SIGWINCH to the foreground group
      }
    }
  };
  take_input();
  std::uint64_t deadline = r.timeout_ms ? now_ms() + r.timeout_ms : 0;
  std::uint64_t kill_at = 0;  // SIGKILL after the grace, once the deadline has passed

  while (p.out >= 0 || p.err >= 0 || !main_done) {
    pollfd fds[5];
    int n = 0;
    auto watch = [&](int fd, short events) {
      fds[n] = {fd, events, 0};
      return n++;
    };
    int i_sig = watch(sigfd, POLLIN);
    int i_out = p.out >= 0 ? watch(p.out, POLLIN) : -1;
    int i_err = p.err >= 0 ? watch(p.err, POLLIN) : -1;
    int i_chan = input_open && pending_input.size() < kMaxPendingInput ? watch(channel, POLLIN) : -1;
    int i_in = p.in >= 0 && !pending_input.empty() ? watch(p.in, POLLOUT) : -1;

    int wait_ms = -1;
    std::uint64_t now = now_ms();
    for (std::uint64_t t : {main_done || result.timed_out ? 0 : deadline, kill_at}) {
      if (!t) continue;
      int left = static_cast<int>(t > now ? std::min<std::uint64_t>(t - now, 60'000) : 0);
      wait_ms = wait_ms < 0 ? left : std::min(wait_ms, left);
    }
    int ready = ::poll(fds, static_cast<nfds_t>(n), wait_ms);
    if (ready < 0 && errno != EINTR) fatal(errno_text("poll"));

    now = now_ms();
    if (deadline && now >= deadline && !result.timed_out && !main_done) {
      result.timed_out = true;
      job.signal_all(SIGTERM);
      ::kill(-main_pid, SIGTERM);
      kill_at = now + r.kill_grace_ms;
    }
    if (kill_at && now >= kill_at) {
      job.kill_all();
      ::kill(-main_pid, SIGKILL);
      kill_at = 0;
    }
    if (ready <= 0) continue;

    auto forward = [&](int& fd, frame_type type) {
      char buf[kChunkBytes];
      ssize_t got = ::read(fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) return;
      if (got <= 0) {
        ::close(fd);
        fd = -1;
        return;
      }
      send(type, std::string(buf, static_cast<std::size_t>(got)));
    };
    if (i_out >= 0 && fds[i_out].revents) forward(p.out, frame_type::out);
    if (i_err >= 0 && fds[i_err].revents) forward(p.err, frame_type::err);

    if (i_chan >= 0 && fds[i_chan].revents) {
      char buf[4096];
      ssize_t got = ::read(channel, buf, sizeof buf);
      if (got <= 0 && errno != EINTR) fatal("the channel to the launcher closed");
      if (got > 0) in.feed(buf, static_cast<std::size_t>(got));
      take_input();
    }
    if (i_in >= 0 && fds[i_in].revents) {
      ssize_t put = ::write(p.in, pending_input.data(), pending_input.size());
      if (put > 0) pending_input.erase(0, static_cast<std::size_t>(put));
      else if (put < 0 && errno != EAGAIN && errno != EINTR) {  // EPIPE: it stopped reading
        pending_input.clear();
        input_open = false;
      }
    }
    if (p.in >= 0 && !input_open && pending_input.empty()) {
      ::close(p.in);
      p.in = -1;
    }

    if (fds[i_sig].revents) {
      signalfd_siginfo si;
      while (::read(sigfd, &si, sizeof si) == sizeof si) {}
      int status = 0;
      pid_t done;
      // PID 1 reaps every orphan, not just its own child.
      while ((done = ::waitpid(-1, &status, WNOHANG)) > 0) {
        if (done != main_pid) continue;
        main_done = true;
        result.signaled = WIFSIGNALED(status);
        result.code = result.signaled ? WTERMSIG(status) : WEXITSTATUS(status);
        // What it left behind would hold the pipes open: the job ends with its program.
        job.kill_all();
        ::kill(-main_pid, SIGKILL);
      }
    }
  }
  result.oom_killed = job.oom_kills() > 0;
  return result;
}

} // namespace

int main(int argc, char** argv) {
  if (::getpid() != 1) {
    if (argc != 2 || std::strcmp(argv[1], "--channel-stdio") != 0) {
      const char msg[] = "corral-microvm-agent is the micro-VM's /init; outside a VM only --channel-stdio runs it\n";
      (void)!::write(2, msg, sizeof msg - 1);
      return 2;
    }
    in_guest = false;
    channel = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
    channel_out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  } else {
    mount_basics();
    mount_devpts();
    auto opened = microvm_guest::open_channel(kChannelBound);
    if (!opened) fatal(opened.error().message);
    channel = channel_out = *opened;
  }
  write_or_drop(channel_out, kAgentMarker);
  send(frame_type::ready);

  frame_reader in;
  frame f = read_frame(in);
  if (f.type != frame_type::request) fatal("expected the request frame first");
  auto request = decode_request(f.payload);
  if (!request) fatal(request.error().message);
  // Outside a VM, guest paths are placed below where the stand-in was started.
  std::string prefix;
  if (!in_guest) {
    char here[4096];
    if (!::getcwd(here, sizeof here)) fatal(errno_text("getcwd"));
    prefix = here;
  }
  guest_trees trees(*request, prefix, in_guest);
  if (auto r = trees.set_up(); !r) fatal(r.error().message);
  // The working directory /work is made when no tree brings it (the boot probe); a cwd the
  // request names is entered as it is, or not at all, as on every other tier.
  if (request->cwd == "/work" && !trees.is_tree(request->cwd)) {
    if (::mkdir(trees.local(request->cwd).c_str(), 0755) < 0 && errno != EEXIST) fatal(errno_text("mkdir " + request->cwd));
    if (in_guest && ::chown(request->cwd.c_str(), kNobody, kNobody) < 0) fatal(errno_text("chown " + request->cwd));
  }
  request->cwd = trees.local(request->cwd);

  auto job = in_guest ? guest_cgroup::create("/sys/fs/cgroup", *request) : expected<guest_cgroup>(guest_cgroup{});
  if (!job) fatal(job.error().message);
  auto result = supervise(*request, *job, in);
  trees.report_changes([](frame_type type, const std::string& payload) { send(type, payload); });
  send(frame_type::exit, encode_exit(result));
  end_after_last_frame();
}
