// What systemd hands a service and hears from it, without libsystemd: the two protocols
// are a few lines each and stable (sd_listen_fds(3), sd_notify(3)).
//
// Socket activation: LISTEN_PID names this process and LISTEN_FDS counts descriptors
// from 3; corral.socket passes exactly one, the daemon's Unix socket.
// Readiness: datagrams to $NOTIFY_SOCKET ("READY=1", "STOPPING=1", "STATUS=…"), sent
// only once every listener accepts (Type=notify in corral.service).
#pragma once

#include <optional>
#include <string>

#include "config/failure.hpp"

namespace corral {

// The listening socket systemd passed, or nullopt when none was passed to this process.
// A passed descriptor that is not one listening AF_UNIX stream socket is an error naming
// what is wrong. The variables are removed either way: no child inherits them.
expected<std::optional<int>> activated_socket();

class service_manager_notifier {
public:
  // Takes $NOTIFY_SOCKET (and removes it from the environment); inactive when unset.
  static service_manager_notifier from_environment();

  bool active() const { return !address_.empty(); }
  // One datagram of newline-separated assignments; ok (and nothing sent) when inactive.
  status notify(const std::string& state) const;

private:
  std::string address_;  // a path, or "@name" for an abstract socket
};

} // namespace corral
