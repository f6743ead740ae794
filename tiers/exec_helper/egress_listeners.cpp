#include "tiers/exec_helper/egress_listeners.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "tiers/exec_helper/status_writer.hpp"

namespace corral::helper {

namespace {

// Enough for a burst of a program's parallel connections before the runtime accepts.
constexpr int kBacklog = 128;

int fail(const std::string& what) {
  int err = errno ? errno : EINVAL;
  report_failed(err, "egress", what + ": " + std::strerror(err));
  return err;
}

void close_all(std::vector<int>& fds) {
  for (int fd : fds) ::close(fd);
  fds.clear();
}

} // namespace

int hand_over_egress_listeners(const jail_spec& spec, std::vector<sockaddr_in>* bound) {
  if (spec.egress_ports.empty()) return 0;
  std::vector<int> fds;
  for (auto port : spec.egress_ports) {
    // Non-blocking: the runtime's loop accepts until EAGAIN; a blocking listener would stall it.
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return close_all(fds), fail("socket for the egress listener");
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = bound ? 0 : htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0)
      return close_all(fds), fail("bind 127.0.0.1:" + std::to_string(port) + " in the jail");
    if (::listen(fd, kBacklog) < 0) return close_all(fds), fail("listen on 127.0.0.1:" + std::to_string(port));
    if (bound) {
      socklen_t len = sizeof addr;
      if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) < 0)
        return close_all(fds), fail("getsockname of an egress listener");
      bound->push_back(addr);
    }
  }
  std::string line = "listeners " + std::to_string(fds.size()) + "\n";
  iovec iov{line.data(), line.size()};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()), 0);
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(cm), fds.data(), sizeof(int) * fds.size());
  ssize_t n;
  do n = ::sendmsg(kStatusFd, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) {
    int rc = fail("send the egress listeners to the runtime");
    close_all(fds);
    return rc;
  }
  // The runtime holds them now; the jail keeps none, so the program cannot accept on them.
  close_all(fds);
  return 0;
}

} // namespace corral::helper
