#include "proto/daemon/default_socket.hpp"

#include <cstdlib>
#include <unistd.h>

namespace corral {

std::string default_socket_path() {
  if (::geteuid() == 0) return "/run/corral/corral.sock";
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg) return std::string(xdg) + "/corral/corral.sock";
  return "/tmp/corral-" + std::to_string(::geteuid()) + "/corral.sock";
}

} // namespace corral
