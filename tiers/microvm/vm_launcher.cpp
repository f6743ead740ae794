// corral-microvm: the host side of one micro-VM execution. The microvm tier's launch plan
// runs it (through the exec helper in host mode, so the runtime's collectors, timeout and
// result path apply unchanged): it starts QEMU with the guest kernel and initramfs, sends
// the request over the channel (a virtio-serial port), turns the agent's frames back into
// stdout, stderr and an exit status, and makes sure QEMU is gone before it exits.
//
// Exit status: the program's own; the same signal re-raised when a signal ended it (an
// OOM kill in the guest re-raises SIGKILL after saying so on stderr); 124 when the guest
// or the launcher's own deadline ended it; 125 when the VM could not run it.
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <vector>

#include "tiers/microvm/guest_protocol.hpp"
#include "tiers/microvm/host_write_back.hpp"
#include "tiers/microvm/vm_options.hpp"

using namespace corral;

namespace {

constexpr int kRefused = 125;
constexpr int kTimedOut = 124;
// What the guest printed before the agent's marker, kept to explain a VM that died early.
constexpr std::size_t kBootTextKept = 8192;

pid_t vmm_pid = -1;
// A terminal request: the launcher's own terminal is raw while it runs (the guest's pty
// does the line discipline, echo included) and restored on every way out.
termios saved_terminal{};
bool terminal_raw = false;

void restore_terminal() {
  if (terminal_raw) ::tcsetattr(0, TCSANOW, &saved_terminal);
  terminal_raw = false;
}

[[noreturn]] void finish(int code, const std::string& message = "") {
  restore_terminal();
  if (!message.empty()) {
    std::string line = "corral-microvm: " + message + "\n";
    (void)!::write(2, line.data(), line.size());
  }
  if (vmm_pid > 0) {
    ::kill(vmm_pid, SIGKILL);  // a throwaway VM: nothing inside needs a clean shutdown
    ::waitpid(vmm_pid, nullptr, 0);
  }
  ::_exit(code);
}

// Appends to `text` and keeps its last kBootTextKept bytes: the end of a panic or of the
// agent's message is what explains a failure.
void keep_tail(std::string& text, const char* data, ssize_t size) {
  text.append(data, static_cast<std::size_t>(size));
  if (text.size() > kBootTextKept) text.erase(0, text.size() - kBootTextKept);
}

std::uint64_t now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1'000'000;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 1000);
      continue;
    }
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// QEMU with the channel on its stdin/stdout and the guest's serial console on fd 3.
pid_t start_vmm(const std::vector<std::string>& argv, int& to_guest, int& from_guest, int& console) {
  int in[2], out[2], con[2];
  if (::pipe2(in, O_CLOEXEC) < 0 || ::pipe2(out, O_CLOEXEC) < 0 || ::pipe2(con, O_CLOEXEC) < 0)
    finish(kRefused, std::string("pipe2: ") + std::strerror(errno));
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) finish(kRefused, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The launcher is single-threaded, so the parent-death signal is reliable here; the
    // runtime's process-group kill is the guarantee all the same.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(con[1], 3);
    // QEMU runs on the host: it must never see the program's environment (LD_PRELOAD from
    // a request would load into the VMM), only a fixed PATH.
    char path[] = "PATH=/usr/local/bin:/usr/bin:/bin";
    char* env[] = {path, nullptr};
    ::execve(args[0], args.data(), env);
    std::string msg = "corral-microvm: cannot run the VMM " + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(kRefused);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(con[1]);
  to_guest = in[1];
  from_guest = out[0];
  console = con[0];
  ::fcntl(console, F_SETFL, O_NONBLOCK);  // never waits on a writer that lingers
  ::fcntl(to_guest, F_SETFL, O_NONBLOCK);
  return pid;
}

[[noreturn]] void report_exit(const guest_exit& e, const vm_options& o) {
  if (e.timed_out) finish(kTimedOut, "the guest agent ended the program at its timeout");
  if (e.oom_killed)
    ::dprintf(2, "corral-microvm: out of memory: the guest's OOM killer ended the program or one of its "
                 "processes (memory limit %llu bytes)\n",
              static_cast<unsigned long long>(o.request.memory_bytes));
  if (!e.signaled) finish(e.code & 0xff);
  if (vmm_pid > 0) {
    ::kill(vmm_pid, SIGKILL);
    ::waitpid(vmm_pid, nullptr, 0);
    vmm_pid = -1;
  }
  // Mirror the signal, so the runtime's result says "killed by signal N" as on any tier.
  restore_terminal();
  ::signal(e.code, SIG_DFL);
  ::kill(::getpid(), e.code);
  finish(128 + e.code);
}

} // namespace

int main(int argc, char** argv) {
  auto parsed = parse_vm_options(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed) finish(kRefused, parsed.error().message);
  vm_options& o = *parsed;
  for (char** e = environ; *e; ++e) o.request.envp.push_back(*e);  // the guest's whole environment
  if (auto read = read_trees(o.trees, o.request); !read) finish(kRefused, read.error().message);
  // The copies live in the guest's RAM (tmpfs) and in the agent while it compares them
  // afterwards: the VM gets room for both beside the program's own limit.
  std::uint64_t copied = 0;
  for (auto& f : o.request.files) copied += f.content.size();
  o.vm_memory_mib += (2 * copied + (1u << 20) - 1) >> 20;
  // What comes back cannot exceed what the VM could hold.
  auto write_back = host_write_back::open(o.trees, o.vm_memory_mib << 20);
  if (!write_back) finish(kRefused, write_back.error().message);

  ::signal(SIGPIPE, SIG_IGN);
  int winch = -1;
  if (o.request.tty) {
    if (!::isatty(0)) finish(kRefused, "--tty needs a terminal on stdin");
    winsize ws{};
    if (::ioctl(0, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) o.request.rows = ws.ws_row, o.request.cols = ws.ws_col;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGWINCH);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    winch = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (winch < 0 || ::tcgetattr(0, &saved_terminal) < 0) finish(kRefused, std::string("terminal: ") + std::strerror(errno));
    termios raw = saved_terminal;
    ::cfmakeraw(&raw);
    if (::tcsetattr(0, TCSANOW, &raw) < 0) finish(kRefused, std::string("terminal: ") + std::strerror(errno));
    terminal_raw = true;
  }
  std::uint64_t deadline = o.timeout_ms ? now_ms() + o.timeout_ms : 0;
  int to_guest = -1, from_guest = -1, console = -1;
  vmm_pid = start_vmm(vmm_argv(o), to_guest, from_guest, console);

  std::string boot_text;     // the channel until the marker
  std::string console_text;  // the serial console's last kBootTextKept bytes
  // What explains a VM that ended before its agent spoke.
  auto guest_printed = [&] {
    const auto& text = console_text.empty() ? boot_text : console_text;
    return text.empty() ? std::string() : "; the guest printed: " + text;
  };
  bool marker_seen = false, request_sent = false, stdin_open = true;
  frame_reader frames;
  std::string outgoing;  // framed bytes waiting for QEMU's stdin
  for (;;) {
    pollfd fds[5];
    int n = 0;
    fds[n++] = {from_guest, POLLIN, 0};
    int i_console = console >= 0 ? n : -1;
    if (i_console >= 0) fds[n++] = {console, POLLIN, 0};
    int i_winch = winch >= 0 ? n : -1;
    if (i_winch >= 0) fds[n++] = {winch, POLLIN, 0};
    int i_stdin = request_sent && stdin_open && outgoing.size() < 64 * 1024 ? n : -1;
    if (i_stdin >= 0) fds[n++] = {0, POLLIN, 0};
    int i_to = !outgoing.empty() ? n : -1;
    if (i_to >= 0) fds[n++] = {to_guest, POLLOUT, 0};
    int wait = -1;
    if (deadline) {
      auto now = now_ms();
      if (now >= deadline)
        finish(kTimedOut, "the VM did not finish within " + std::to_string(o.timeout_ms) +
                              " ms (boot included); QEMU killed" + (marker_seen ? "" : guest_printed()));
      wait = static_cast<int>(deadline - now);
    }
    int ready = ::poll(fds, static_cast<nfds_t>(n), wait);
    if (ready < 0 && errno != EINTR) finish(kRefused, std::string("poll: ") + std::strerror(errno));
    if (ready <= 0) continue;

    // Read the console first: when QEMU exits, what the guest said last is then in hand.
    if (i_console >= 0 && fds[i_console].revents) {
      char buf[4096];
      ssize_t got = ::read(console, buf, sizeof buf);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        ::close(console);
        console = -1;
      } else {
        keep_tail(console_text, buf, got);
      }
    }
    if (fds[0].revents) {
      char buf[16384];
      ssize_t got = ::read(from_guest, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        int status = 0;
        ::waitpid(vmm_pid, &status, 0);
        vmm_pid = -1;
        std::string why = marker_seen ? "the VM stopped before the program finished"
                                      : "the VM stopped before the guest agent started";
        if (WIFEXITED(status)) why += " (QEMU exit " + std::to_string(WEXITSTATUS(status)) + ")";
        else if (WIFSIGNALED(status)) why += " (QEMU killed by signal " + std::to_string(WTERMSIG(status)) + ")";
        if (!marker_seen) {
          // QEMU has exited: whatever the console still holds is all there is.
          char buf[4096];
          ssize_t got;
          while (console >= 0 && (got = ::read(console, buf, sizeof buf)) > 0) keep_tail(console_text, buf, got);
          why += guest_printed();
        }
        finish(kRefused, why);
      }
      std::size_t from = 0;
      if (!marker_seen) {
        boot_text.append(buf, static_cast<std::size_t>(got));
        auto at = boot_text.find(kAgentMarker);
        if (at == std::string::npos) {
          if (boot_text.size() > kBootTextKept) boot_text.erase(0, boot_text.size() - kBootTextKept);
          continue;
        }
        marker_seen = true;
        auto rest = boot_text.substr(at + std::strlen(kAgentMarker));
        frames.feed(rest.data(), rest.size());
        from = static_cast<std::size_t>(got);
      }
      if (from < static_cast<std::size_t>(got)) frames.feed(buf + from, static_cast<std::size_t>(got) - from);
      for (;;) {
        auto next = frames.next();
        if (!next) finish(kRefused, next.error().message);
        if (!*next) break;
        frame& f = **next;
        switch (f.type) {
          case frame_type::ready:
            outgoing += encode_frame(frame_type::request, encode_request(o.request));
            request_sent = true;
            break;
          case frame_type::out:
            if (!write_all(1, f.payload.data(), f.payload.size())) finish(kRefused, "stdout closed");
            break;
          case frame_type::err:
            if (!write_all(2, f.payload.data(), f.payload.size())) finish(kRefused, "stderr closed");
            break;
          case frame_type::written:
          case frame_type::removed: {
            auto entry = decode_file(f.payload);
            if (!entry) finish(kRefused, entry.error().message);
            auto done = f.type == frame_type::written ? write_back->write(*entry) : write_back->remove(*entry);
            if (!done) finish(kRefused, done.error().message);
            break;
          }
          case frame_type::exit: {
            auto e = decode_exit(f.payload);
            if (!e) finish(kRefused, e.error().message);
            report_exit(*e, o);
          }
          case frame_type::fatal:
            finish(kRefused, "the guest agent failed: " + f.payload);
          default:
            finish(kRefused, "unexpected frame from the guest agent");
        }
      }
    }
    // Before stdin: a resize that came first reaches the guest first.
    if (i_winch >= 0 && fds[i_winch].revents) {
      signalfd_siginfo si;
      while (::read(winch, &si, sizeof si) == sizeof si) {}
      winsize ws{};
      if (::ioctl(0, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
        if (request_sent) outgoing += encode_frame(frame_type::resize, encode_window(ws.ws_row, ws.ws_col));
        else o.request.rows = ws.ws_row, o.request.cols = ws.ws_col;
      }
    }
    if (i_stdin >= 0 && fds[i_stdin].revents) {
      char buf[kChunkBytes];
      ssize_t got = ::read(0, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        stdin_open = false;
        outgoing += encode_frame(frame_type::input_end, "");
      } else {
        outgoing += encode_frame(frame_type::input, std::string(buf, static_cast<std::size_t>(got)));
      }
    }
    if (i_to >= 0 && fds[i_to].revents) {
      ssize_t put = ::write(to_guest, outgoing.data(), outgoing.size());
      if (put > 0) outgoing.erase(0, static_cast<std::size_t>(put));
      else if (put < 0 && errno != EAGAIN && errno != EINTR) finish(kRefused, "the VM's serial input closed");
    }
  }
}
