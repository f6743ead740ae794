// corral's HTTP/1.1 server I/O: one libuv loop on its own thread owning the TCP listener
// and every connection. It parses (request_reader) and enforces the limits below; it
// decides nothing about requests. Each accepted connection gets an actor (from `accept`)
// that hears the messages of http_events.hpp and answers through write() and close(),
// which any thread may call (queued, then uv_async_send: no handle is touched off the
// loop thread, as in socket_loop).
//
// The loop answers protocol errors itself, then closes: 400 (malformed), 431 (head too
// large), 413 (body too large; a Content-Length is checked before the body is read), 505.
// `Expect: 100-continue` gets its interim response before the body is read. Keep-alive
// and pipelining are served; the actor answers requests in order and, when a request says
// keep_alive == false (Connection: close, HTTP/1.0), calls close() after its response:
// the loop does not close by itself, since only the actor knows when a response ends.
// Limitations: the loop's own answers (100, 4xx) are written when the loop sees the
// need, so a client that pipelines behind an unanswered request can see them before that
// answer; a client that half-closes (EOF) is treated as gone; reading does not pause
// while an actor is behind on pipelined requests (they queue in its mailbox); a
// connection idle between requests is bounded only by max_connections.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <caf/actor.hpp>

#include "config/failure.hpp"

namespace corral {

struct http_limits {
  std::size_t max_head_bytes = 64 << 10;  // request line and headers (the parser's own bound is 80 KiB)
  std::size_t max_body_bytes = 256 << 20;
  std::size_t max_connections = 256;  // one more is accepted, then closed at once
  // From accept (or a later request's first byte) to a complete head: slowloris.
  std::chrono::milliseconds head_timeout{30'000};
  std::size_t max_pending_output = 64 << 20;  // unwritten bytes before a client is dropped
};

class http_loop {
public:
  // Called on the loop thread for each accepted connection; a null actor closes it.
  using accept_fn = std::function<caf::actor(std::uint64_t connection, const std::string& peer_address)>;

  http_loop(http_limits limits, accept_fn accept);
  ~http_loop();  // stop()
  http_loop(const http_loop&) = delete;
  http_loop& operator=(const http_loop&) = delete;

  // Before start(): a numeric IPv4 or IPv6 address ("127.0.0.1", "::1", "[::]", "0.0.0.0"),
  // or "localhost"; port 0 takes an ephemeral port (see port()).
  status listen(const std::string& host, std::uint16_t port);
  std::uint16_t port() const { return port_.load(); }

  // Runs the loop on its own thread until stop().
  void start();
  // Closes the listener and every connection (each actor hears http_closed), then joins
  // the loop's thread. Idempotent; not from the loop thread (an accept_fn).
  void stop();

  void write(std::uint64_t connection, std::string bytes);
  // After what was written before has gone out: shutdown, then the socket closes.
  void close(std::uint64_t connection);

  std::size_t connections() const { return connections_.load(); }

private:
  struct impl;
  std::unique_ptr<impl> impl_;
  std::thread thread_;
  std::atomic<std::uint16_t> port_{0};
  std::atomic<std::size_t> connections_{0};
  std::atomic<bool> stopped_{false};
};

} // namespace corral
