// The contained tier's door to the egress proxy. Without a network namespace the program
// shares the host's network, and Landlock governs TCP by port only, so an "allow port P"
// rule would also reach P on any other host. Instead the target's seccomp filter hands
// every connect(2) to this broker in the helper (SECCOMP_RET_USER_NOTIF). The broker reads
// the address the program asked for; when it is an egress proxy's (127.0.0.1 or ::1 at the
// proxy port the environment names), the broker connects a socket of its own to the
// proxy's real listener (egress_listeners.hpp) and installs it in place of the program's
// (SECCOMP_IOCTL_NOTIF_ADDFD): the connect never runs in the program, so no address it
// rewrites after the check can matter. Every other connect fails with EACCES.
#pragma once

#include <cstdint>
#include <netinet/in.h>
#include <sys/types.h>
#include <vector>

namespace corral::helper {

struct broker_route {
  std::uint16_t asked_port = 0;  // what the program connects to on loopback
  sockaddr_in listener{};        // where the broker connects instead
};

class connect_broker {
public:
  explicit connect_broker(std::vector<broker_route> routes) : routes_(std::move(routes)) {}
  ~connect_broker();
  connect_broker(const connect_broker&) = delete;
  connect_broker& operator=(const connect_broker&) = delete;

  // Before the target starts: the socket pair on which its filter's listener comes back.
  // Returns 0 or an errno after reporting.
  int prepare();
  // In the target, after its filter is installed: sends `listener` to the helper and closes
  // the target's copies. Allocates nothing (the target shares the helper's memory).
  int send_listener(int listener) const;
  // The target's end of the socket pair, which it keeps open until then.
  int target_end() const { return pair_[1]; }
  // In the helper, once the target is started: takes the listener. 0 or an errno.
  int receive_listener();
  // The notification fd to poll, or -1 before receive_listener or once it is closed.
  int fd() const { return listener_; }
  // Answers every pending notification; closes the fd once no filtered process is left.
  void serve();

private:
  int answer(pid_t pid, const void* addr, std::size_t len, int target_fd, std::uint64_t id);
  std::vector<broker_route> routes_;
  int pair_[2] = {-1, -1};
  int listener_ = -1;
};

} // namespace corral::helper
