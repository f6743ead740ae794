#include "proto/daemon/service_manager.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace corral {

namespace {

constexpr int kFirstPassedFd = 3;  // SD_LISTEN_FDS_START

int socket_option(int fd, int option) {
  int value = -1;
  socklen_t len = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, option, &value, &len) < 0) return -1;
  return value;
}

} // namespace

expected<std::optional<int>> activated_socket() {
  const char* pid_text = std::getenv("LISTEN_PID");
  const char* count_text = std::getenv("LISTEN_FDS");
  std::string pid = pid_text ? pid_text : "", count = count_text ? count_text : "";
  ::unsetenv("LISTEN_PID");
  ::unsetenv("LISTEN_FDS");
  ::unsetenv("LISTEN_FDNAMES");
  // Meant for another process (a parent that did not clear them): not ours to take.
  if (pid.empty() || count.empty() || pid != std::to_string(::getpid())) return std::optional<int>{};
  if (count != "1")
    return make_failure(failure_kind::config_error,
                        "systemd passed " + count + " sockets (LISTEN_FDS); corral serve takes exactly one, "
                        "its Unix socket: give corral.socket a single ListenStream= with a path");
  int fd = kFirstPassedFd;
  sockaddr_un addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) < 0 || addr.sun_family != AF_UNIX ||
      socket_option(fd, SO_TYPE) != SOCK_STREAM)
    return make_failure(failure_kind::config_error,
                        "the socket systemd passed (fd 3) is not a Unix stream socket; corral.socket needs "
                        "ListenStream=/run/corral/corral.sock (a path, not a port)");
  if (socket_option(fd, SO_ACCEPTCONN) != 1)
    return make_failure(failure_kind::config_error,
                        "the socket systemd passed (fd 3) is not listening; use ListenStream= and Accept=no");
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // no execution's helper inherits the daemon's socket
  return std::optional<int>{fd};
}

service_manager_notifier service_manager_notifier::from_environment() {
  service_manager_notifier n;
  if (const char* where = std::getenv("NOTIFY_SOCKET"); where && (where[0] == '/' || where[0] == '@'))
    n.address_ = where;
  ::unsetenv("NOTIFY_SOCKET");
  return n;
}

status service_manager_notifier::notify(const std::string& state) const {
  if (!active()) return ok();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (address_.size() >= sizeof addr.sun_path)
    return make_failure(failure_kind::config_error, "NOTIFY_SOCKET is longer than a Unix socket path allows");
  std::memcpy(addr.sun_path, address_.data(), address_.size());
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';  // an abstract name
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address_.size());
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_failure(failure_kind::internal, std::string("socket for NOTIFY_SOCKET: ") + std::strerror(errno));
  ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr), len);
  int err = errno;
  ::close(fd);
  if (sent < 0)
    return make_failure(failure_kind::internal, "telling the service manager (" + address_ + "): " + std::strerror(err));
  return ok();
}

} // namespace corral
