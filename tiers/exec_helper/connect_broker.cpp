#include "tiers/exec_helper/connect_broker.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tiers/exec_helper/status_writer.hpp"

namespace corral::helper {

namespace {

// A proxy listener on the helper's own loopback accepts at once (its backlog is 128); the
// bound only keeps a wedged runtime from wedging the helper.
constexpr int kConnectBoundMs = 2000;

int fail(const std::string& what) {
  int err = errno ? errno : EINVAL;
  report_failed(err, "egress", what + ": " + std::strerror(err));
  return err;
}

// The target's open-file flags for `fd` (O_NONBLOCK, O_CLOEXEC), from fdinfo; -1 if gone.
long target_fd_flags(pid_t pid, int fd) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", pid, fd);
  FILE* f = std::fopen(path, "re");
  if (!f) return -1;
  long flags = -1;
  char line[128];
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "flags: %lo", &flags) == 1) break;
  std::fclose(f);
  return flags;
}

// True when the target's `fd` is a TCP stream socket (the only kind the broker replaces).
bool is_inet_stream(pid_t pid, int fd) {
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return false;
  int copy = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  ::close(pidfd);
  if (copy < 0) return false;
  int domain = 0, type = 0;
  socklen_t len = sizeof domain;
  bool ok = ::getsockopt(copy, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0;
  len = sizeof type;
  ok = ok && ::getsockopt(copy, SOL_SOCKET, SO_TYPE, &type, &len) == 0;
  ::close(copy);
  return ok && (domain == AF_INET || domain == AF_INET6) && type == SOCK_STREAM;
}

// The loopback port the program asked for, or 0 for any other address.
std::uint16_t loopback_port(const unsigned char* addr, std::size_t len) {
  sa_family_t family = 0;
  if (len < sizeof family) return 0;
  std::memcpy(&family, addr, sizeof family);
  if (family == AF_INET && len >= sizeof(sockaddr_in)) {
    sockaddr_in in{};
    std::memcpy(&in, addr, sizeof in);
    return ntohl(in.sin_addr.s_addr) == INADDR_LOOPBACK ? ntohs(in.sin_port) : 0;
  }
  if (family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, addr, sizeof in6);
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    bool v4_loopback = std::memcmp(in6.sin6_addr.s6_addr, mapped, 12) == 0 && in6.sin6_addr.s6_addr[12] == 127 &&
                       in6.sin6_addr.s6_addr[13] == 0 && in6.sin6_addr.s6_addr[14] == 0 &&
                       in6.sin6_addr.s6_addr[15] == 1;
    return IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr) || v4_loopback ? ntohs(in6.sin6_port) : 0;
  }
  return 0;
}

// A socket connected to `to`, within the bound; -1 with errno set.
int connect_bounded(const sockaddr_in& to) {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  if (::connect(s, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0) return s;
  if (errno == EINPROGRESS) {
    pollfd p{s, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, kConnectBoundMs) == 1 && ::getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
      return s;
    errno = err ? err : ETIMEDOUT;
  }
  int saved = errno;
  ::close(s);
  errno = saved;
  return -1;
}

} // namespace

connect_broker::~connect_broker() {
  for (int fd : {pair_[0], pair_[1], listener_})
    if (fd >= 0) ::close(fd);
}

int connect_broker::prepare() {
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair_) < 0)
    return fail("socketpair for the connect broker");
  return 0;
}

int connect_broker::send_listener(int listener) const {
  char byte = 'L';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cm), &listener, sizeof(int));
  ssize_t n = ::sendmsg(pair_[1], &msg, MSG_NOSIGNAL);
  int err = errno;
  ::close(listener);
  if (n != 1) {
    report_failed(err, "egress", std::string("handing the seccomp listener to the helper: ") + std::strerror(err));
    return err;
  }
  return 0;
}

int connect_broker::receive_listener() {
  ::close(pair_[1]);
  pair_[1] = -1;
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  // The target sent it before its exec, which the vfork-style start waited for; nothing
  // came when the target failed before its filter (it reported why).
  ssize_t n = ::recvmsg(pair_[0], &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  ::close(pair_[0]);
  pair_[0] = -1;
  cmsghdr* cm = n == 1 ? CMSG_FIRSTHDR(&msg) : nullptr;
  if (!cm || cm->cmsg_type != SCM_RIGHTS) return EINVAL;
  std::memcpy(&listener_, CMSG_DATA(cm), sizeof(int));
  return 0;
}

int connect_broker::answer(pid_t pid, const void* addr_ptr, std::size_t len, int target_fd, std::uint64_t id) {
  // The program's address, copied once: the decision and the connect both use this copy.
  unsigned char addr[sizeof(sockaddr_in6)] = {};
  std::size_t want = len < sizeof addr ? len : sizeof addr;
  iovec local{addr, want};
  iovec remote{const_cast<void*>(addr_ptr), want};
  if (::process_vm_readv(pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(want)) return EFAULT;
  // The copy is the asker's only if the notification is still live (the pid not reused).
  if (::ioctl(listener_, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0) return ENOENT;
  std::uint16_t port = loopback_port(addr, want);
  const broker_route* route = nullptr;
  for (auto& r : routes_)
    if (port != 0 && r.asked_port == port) route = &r;
  if (!route) return EACCES;
  if (!is_inet_stream(pid, target_fd)) return EACCES;
  long flags = target_fd_flags(pid, target_fd);
  if (flags < 0) return EBADF;
  int s = connect_bounded(route->listener);
  if (s < 0) return ECONNREFUSED;
  if (!(flags & O_NONBLOCK)) ::fcntl(s, F_SETFL, ::fcntl(s, F_GETFL) & ~O_NONBLOCK);
  seccomp_notif_addfd add{};
  add.id = id;
  add.flags = SECCOMP_ADDFD_FLAG_SETFD;
  add.srcfd = static_cast<__u32>(s);
  add.newfd = static_cast<__u32>(target_fd);
  add.newfd_flags = (flags & O_CLOEXEC) ? O_CLOEXEC : 0;
  int rc = ::ioctl(listener_, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
  int err = errno;
  ::close(s);
  return rc < 0 ? (err == ENOENT ? ENOENT : EACCES) : 0;
}

void connect_broker::serve() {
  for (;;) {
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return;
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL)) {
      // No process with the filter is left.
      ::close(listener_);
      listener_ = -1;
      return;
    }
    seccomp_notif req{};
    if (::ioctl(listener_, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
      if (errno == EINTR || errno == ENOENT) continue;  // the asker died meanwhile
      return;
    }
    int err = EACCES;
    if (req.data.nr == __NR_connect)
      err = answer(static_cast<pid_t>(req.pid), reinterpret_cast<const void*>(req.data.args[1]),
                   static_cast<std::size_t>(req.data.args[2]), static_cast<int>(req.data.args[0]), req.id);
    if (err == ENOENT) continue;
    seccomp_notif_resp resp{};
    resp.id = req.id;
    resp.error = err ? -err : 0;
    resp.val = 0;
    ::ioctl(listener_, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
}

} // namespace corral::helper
