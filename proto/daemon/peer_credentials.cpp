#include "proto/daemon/peer_credentials.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/socket.h>

namespace corral {

expected<peer_credentials> peer_of(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
    return make_failure(failure_kind::internal, std::string("getsockopt(SO_PEERCRED): ") + std::strerror(errno));
  return peer_credentials{cred.pid, cred.uid, cred.gid};
}

bool access_list::admits(const peer_credentials& peer) const {
  return std::find(uids.begin(), uids.end(), peer.uid) != uids.end() ||
         std::find(gids.begin(), gids.end(), peer.gid) != gids.end();
}

std::string access_list::describe() const {
  std::string out;
  for (auto u : uids) out += (out.empty() ? "" : ", ") + std::string("uid ") + std::to_string(u);
  for (auto g : gids) out += (out.empty() ? "" : ", ") + std::string("gid ") + std::to_string(g);
  return out.empty() ? "nobody" : out;
}

} // namespace corral
