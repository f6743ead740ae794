// Who is on the other end of a Unix socket (SO_PEERCRED: the credentials the kernel
// recorded at connect time, which the client cannot forge), and whether the daemon's
// allow list admits them.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "config/failure.hpp"

namespace corral {

struct peer_credentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  // Supplementary groups at connect time (SO_PEERGROUPS): a user admitted through a group
  // (`--allow-gid`, the socket's group) is usually in it as a supplementary one.
  std::vector<gid_t> groups;
};

expected<peer_credentials> peer_of(int socket_fd);

// A peer is admitted when its uid, its primary gid or one of its supplementary groups is
// listed. An empty list admits
// nobody; the daemon's default is its own uid.
struct access_list {
  std::vector<uid_t> uids;
  std::vector<gid_t> gids;

  bool admits(const peer_credentials& peer) const;
  std::string describe() const;  // "uid 0, gid 100", for logs and refusals
};

} // namespace corral
