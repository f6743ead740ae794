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
  peer_credentials peer{cred.pid, cred.uid, cred.gid, {}};
  // The kernel says how many groups there are when the buffer is too small (ERANGE).
  std::vector<gid_t> groups(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    socklen_t glen = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &glen) == 0) {
      groups.resize(glen / sizeof(gid_t));
      peer.groups = std::move(groups);
      return peer;
    }
    if (errno != ERANGE)
      return make_failure(failure_kind::internal, std::string("getsockopt(SO_PEERGROUPS): ") + std::strerror(errno));
    groups.resize(glen / sizeof(gid_t) + 1);
  }
  return make_failure(failure_kind::internal, "getsockopt(SO_PEERGROUPS): the peer's groups kept changing");
}

bool access_list::admits(const peer_credentials& peer) const {
  return std::find(uids.begin(), uids.end(), peer.uid) != uids.end() ||
         std::find(gids.begin(), gids.end(), peer.gid) != gids.end() ||
         std::find_first_of(gids.begin(), gids.end(), peer.groups.begin(), peer.groups.end()) != gids.end();
}

std::string access_list::describe() const {
  std::string out;
  for (auto u : uids) out += (out.empty() ? "" : ", ") + std::string("uid ") + std::to_string(u);
  for (auto g : gids) out += (out.empty() ? "" : ", ") + std::string("gid ") + std::to_string(g);
  return out.empty() ? "nobody" : out;
}

} // namespace corral
