// The daemon's I/O: one libuv loop, run on the thread that calls run(), owning the
// listening socket, every client's stream and the SIGTERM/SIGINT handlers. It frames lines
// and checks peer credentials; it decides nothing about requests. Each admitted client
// gets an actor (from `accept`), which hears conn_line / conn_oversized / conn_closed and
// answers through write() and close() (thread-safe: queued, then uv_async_send). The
// libuv discipline of io_loop applies: no handle is touched from another thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <sys/types.h>
#include <string>

#include <caf/actor.hpp>

#include "config/failure.hpp"
#include "proto/daemon/daemon_messages.hpp"
#include "proto/daemon/peer_credentials.hpp"

namespace corral {

// Who may connect(2) to the socket the daemon binds: its permission bits and group. The
// allow list (SO_PEERCRED) is checked on every connection on top of these.
struct socket_access {
  unsigned mode = 0600;        // at most 0666, always including 0600
  std::optional<gid_t> group;  // empty: the daemon's primary group
};

// Whether `access` is a mode corral serves with: 0600 kept, at most 0066 added.
status check_socket_access(const socket_access& access);

struct socket_loop_limits {
  std::size_t max_line = 8 << 20;             // a request line, stdin included
  std::size_t max_pending_output = 16 << 20;  // unwritten bytes before a client is dropped
  std::size_t max_connections = 256;
  // Per client uid: one user's connections cannot take every slot from the others.
  std::size_t max_connections_per_uid = 64;
};

class socket_loop {
public:
  // Called on the loop thread for each admitted client; returns the actor for its events.
  using accept_fn = std::function<caf::actor(connection_id, const peer_credentials&)>;

  socket_loop(socket_loop_limits limits, accept_fn accept);
  ~socket_loop();
  socket_loop(const socket_loop&) = delete;
  socket_loop& operator=(const socket_loop&) = delete;

  // Before run(): bind `path` (mode 0600 unless `access` says otherwise; a stale socket is
  // replaced, a live one refused). A mode that lets others in makes the socket's directory
  // searchable by them (0711), never listable or writable.
  status listen(const std::string& path, access_list allowed, socket_access access = {});
  // Before run(): serve a listening socket another process bound (systemd's socket
  // activation). It is not this loop's: it is neither chmod-ed nor removed at the stop.
  status listen_on(int fd, access_list allowed);
  // The path the listener is bound to (for the logs and the readiness line).
  std::string listening_path() const;
  // Before run(): serve one client on this process's stdin/stdout; the loop ends when it
  // hangs up, unless a socket is served too.
  status attach_stdio();

  // Runs until stop() or SIGTERM/SIGINT: then the socket is removed, every client is
  // closed (its actor hears conn_closed) and run() returns.
  void run();
  void stop();

  void write(connection_id id, std::string bytes);
  void close(connection_id id, std::string reason);

  std::size_t connections() const { return connections_.load(); }
  // Whether run() ended because of a signal (and which).
  int stopped_by_signal() const { return signal_.load(); }

private:
  struct impl;
  std::unique_ptr<impl> impl_;
  std::atomic<std::size_t> connections_{0};
  std::atomic<int> signal_{0};
};

} // namespace corral
