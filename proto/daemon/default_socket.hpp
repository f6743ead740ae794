// Where a daemon listens and its clients connect when no socket is named.
#pragma once

#include <string>

namespace corral {

// /run/corral/corral.sock for root, else $XDG_RUNTIME_DIR/corral/corral.sock, else
// /tmp/corral-<uid>/corral.sock: the runtime's own state directory (mode 0700).
std::string default_socket_path();

} // namespace corral
