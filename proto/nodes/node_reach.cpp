#include "proto/nodes/node_reach.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <set>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/openssl/manager.hpp>

namespace corral {

namespace {

constexpr std::chrono::seconds kHandshakeBound{10};

// One address of the host: empty when it connected within the bound, else why not.
std::string try_connect(const addrinfo& ai, std::chrono::milliseconds bound) {
  int fd = ::socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai.ai_protocol);
  if (fd < 0) return std::string("socket: ") + std::strerror(errno);
  std::string why;
  if (::connect(fd, ai.ai_addr, ai.ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      why = std::strerror(errno);
    } else {
      pollfd p{fd, POLLOUT, 0};
      int ready;
      do ready = ::poll(&p, 1, static_cast<int>(bound.count()));
      while (ready < 0 && errno == EINTR);
      int err = 0;
      socklen_t len = sizeof err;
      if (ready == 0)
        why = "no answer within " + std::to_string(bound.count()) + " ms";
      else if (ready < 0)
        why = std::string("poll: ") + std::strerror(errno);
      else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)
        why = std::strerror(err ? err : errno);
    }
  }
  ::close(fd);
  return why;
}

} // namespace

std::string probe_tcp(const node_address& address, std::chrono::milliseconds bound) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  auto port = std::to_string(address.port);
  if (int rc = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found); rc != 0)
    return std::string("cannot resolve the host: ") + ::gai_strerror(rc);
  std::string why = "no address";
  for (auto* ai = found; ai; ai = ai->ai_next) {
    why = try_connect(*ai, bound);
    if (why.empty()) break;
  }
  ::freeaddrinfo(found);
  return why;
}

placement_node reach_node(caf::actor_system& sys, const node_address& address, std::chrono::milliseconds probe_bound) {
  placement_node n;
  n.address = address;
  if (auto why = probe_tcp(address, probe_bound); !why.empty()) {
    n.reason = "cannot reach " + address.label() + ": " + why + " (is the node running and listening there?)";
    return n;
  }
  // What caf::openssl::remote_actor does, with a deadline on the TLS and CAF handshakes.
  caf::scoped_actor self{sys};
  caf::actor handle;
  self->request(sys.openssl_manager().actor_handle(), kHandshakeBound, caf::connect_atom::value, address.host,
                address.port)
      .receive(
          [&](const caf::node_id&, caf::strong_actor_ptr& published, const std::set<std::string>&) {
            handle = caf::actor_cast<caf::actor>(std::move(published));
            if (!handle) n.reason = "nothing is published on " + address.label() + " (is it a corral node?)";
          },
          [&](caf::error& e) {
            n.reason = "cannot connect over TLS: " + sys.render(e) +
                       " (is the node listening, and do both certificates come from the same CA?)";
          });
  if (!handle) return n;
  self->request(handle, kHandshakeBound, load_atom::value)
      .receive(
          [&](node_load& load) {
            n.load = std::move(load);
            n.handle = handle;
          },
          [&](caf::error& e) { n.reason = "no load report: " + sys.render(e); });
  return n;
}

} // namespace corral
