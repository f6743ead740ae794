#include "proto/cli/local_tty.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

namespace corral::cli {

namespace {

// Globals because a signal handler can reach nothing else; it may only call
// async-signal-safe functions, and tcsetattr and write are.
termios g_saved{};
std::atomic<bool> g_raw{false};
int g_winch[2] = {-1, -1};

void on_fatal_signal(int sig) {
  restore_tty();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void on_winch(int) {
  int saved = errno;
  if (g_winch[1] >= 0) (void)!::write(g_winch[1], "w", 1);
  errno = saved;
}

} // namespace

void restore_tty() {
  if (g_raw.exchange(false)) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_saved);
}

raw_mode::raw_mode() {
  if (!::isatty(STDIN_FILENO) || ::tcgetattr(STDIN_FILENO, &g_saved) < 0) return;
  termios raw = g_saved;
  ::cfmakeraw(&raw);
  for (int sig : {SIGTERM, SIGHUP, SIGQUIT, SIGINT, SIGABRT, SIGSEGV, SIGPIPE}) ::signal(sig, on_fatal_signal);
  if (::tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) == 0) g_raw = true;
}

raw_mode::~raw_mode() { restore_tty(); }

winch_pipe::winch_pipe() {
  if (::pipe2(g_winch, O_CLOEXEC | O_NONBLOCK) < 0) {
    g_winch[0] = g_winch[1] = -1;
    return;
  }
  ::signal(SIGWINCH, on_winch);
}

winch_pipe::~winch_pipe() {
  ::signal(SIGWINCH, SIG_DFL);
  for (int& fd : g_winch) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

bool winch_pipe::ok() const { return g_winch[0] >= 0; }
int winch_pipe::fd() const { return g_winch[0]; }

void winch_pipe::drain() const {
  char buf[256];
  while (::read(g_winch[0], buf, sizeof buf) > 0) {
  }
}

bool local_size(std::uint16_t& rows, std::uint16_t& cols) {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0) return false;
  rows = ws.ws_row;
  cols = ws.ws_col;
  return true;
}

} // namespace corral::cli
