#include "actors/io/child_fds.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

namespace corral {

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool make_pipe(fd_pair& p, bool child_reads) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) < 0) return false;
  int child = child_reads ? fds[0] : fds[1];
  p.parent = child_reads ? fds[1] : fds[0];
  p.child = ::fcntl(child, F_DUPFD_CLOEXEC, kHighFd);
  ::close(child);
  return p.child >= 0;
}

// The status channel is a socket pair, not a pipe: the jail hands its egress listeners
// over it (SCM_RIGHTS), which a pipe cannot carry.
bool make_status_channel(fd_pair& p) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) return false;
  ::shutdown(fds[0], SHUT_WR);  // the runtime only reads
  p.parent = fds[0];
  p.child = ::fcntl(fds[1], F_DUPFD_CLOEXEC, kHighFd);
  ::close(fds[1]);
  return p.child >= 0;
}

// A pty pair with the slave set up before the spawn. O_NOCTTY: the runtime itself must
// never acquire the terminal, or the child's TIOCSCTTY would fail.
bool make_pty(fd_pair& master_out, fd_pair& slave_in, const pty_options& o, std::string& what) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) return what = std::string("posix_openpt: ") + std::strerror(errno), false;
  if (::grantpt(master) < 0 || ::unlockpt(master) < 0) {
    what = std::string("unlockpt: ") + std::strerror(errno);
    ::close(master);
    return false;
  }
  int slave = ::ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) {
    what = std::string("TIOCGPTPEER: ") + std::strerror(errno);
    ::close(master);
    return false;
  }
  winsize ws{};
  ws.ws_row = o.rows;
  ws.ws_col = o.cols;
  ::ioctl(master, TIOCSWINSZ, &ws);
  if (!o.echo) {
    termios t{};
    if (::tcgetattr(slave, &t) == 0) {
      t.c_lflag &= ~static_cast<tcflag_t>(ECHO | ECHONL);
      ::tcsetattr(slave, TCSANOW, &t);
    }
  }
  master_out.parent = master;
  slave_in.parent = ::fcntl(master, F_DUPFD_CLOEXEC, 0);  // the write side, its own handle
  slave_in.child = ::fcntl(slave, F_DUPFD_CLOEXEC, kHighFd);
  master_out.child = ::fcntl(slave, F_DUPFD_CLOEXEC, kHighFd);
  ::close(slave);
  if (slave_in.parent < 0 || slave_in.child < 0 || master_out.child < 0)
    return what = std::string("dup of the pty: ") + std::strerror(errno), false;
  return true;
}

} // namespace corral
