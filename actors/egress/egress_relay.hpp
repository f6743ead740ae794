// The egress proxy's socket half, on the I/O loop's thread. It listens on the sockets a
// jail handed over (tiers/exec_helper/egress_listeners.hpp), reads each connection's
// request head (HTTP CONNECT, HTTP forward, SOCKS5; bounded), asks the execution's
// egress_proxy actor what to do (actors/egress/egress_messages.hpp), resolves with
// uv_getaddrinfo when told to, connects to an address the actor checked, peeks at the
// first bytes of a tunnel to a name (a TLS ClientHello must ask for that name) and relays both
// ways with backpressure. It decides nothing about policy.
//
// Failure edges: the upstream refuses or is unreachable (the next checked address, then
// 502 / SOCKS 05); the resolver fails (the actor turns it into a refusal); the program
// closes mid-relay (both sides closed, egress_closed with the bytes so far); the
// execution ends with connections open (close_process: listeners and connections closed,
// each reported); the proxy is at its connection cap (accept, answer 503 or, SOCKS, just
// close); a head that is garbage, too large or never comes (400, 431, or a close after
// egress_limits::head_timeout); an answer for a connection already gone (ignored).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include <caf/actor.hpp>
#include <uv.h>

#include "actors/egress/egress_messages.hpp"

namespace corral {

struct egress_limits {
  std::size_t max_connections = 256;                     // open at once, per execution
  std::chrono::milliseconds head_timeout{10'000};        // the request head must arrive by then
  std::chrono::milliseconds idle_timeout{120'000};       // a relay with no byte either way
  std::size_t high_water = 256 * 1024;                   // queued bytes before reading pauses
};

enum class listener_kind : std::uint8_t { http, socks5 };

class egress_relay {
public:
  explicit egress_relay(uv_loop_t* loop, egress_limits limits = {});
  ~egress_relay();
  egress_relay(const egress_relay&) = delete;
  egress_relay& operator=(const egress_relay&) = delete;

  // The actor that decides for `process`'s connections; without one, listeners are closed.
  void set_decider(process_id process, caf::actor decider);
  // A handle for the next listener handed over (uv_accept fills it), then start() it.
  uv_tcp_t* new_listener(process_id process, listener_kind kind);
  void start_listener(uv_tcp_t* listener);
  void drop_listener(uv_tcp_t* listener);
  // Closes everything of `process` (its execution ended or its helper was reaped).
  void close_process(process_id process);
  void on_answer(const egress_answer& answer);
  std::size_t open_connections(process_id process) const;

  struct connection;
  struct listener;

  // For the byte moving of actors/egress/egress_pipe.cpp.
  void on_client_bytes(connection* c);
  void on_client_eof(connection* c);  // the program shut its side before the relay began
  void report_closed(connection* c);  // egress_closed to the decider, once per connection
  void forget(connection* c);          // all handles closed: free it
  const egress_limits& limits() const { return limits_; }
  // Reads land in pooled blocks that the write to the other side then owns: no copy and
  // no allocation per chunk. A queued block counts kReadBuffer against the high-water mark,
  // so memory stays bounded however small the reads are.
  static constexpr std::size_t kReadBuffer = 64 * 1024;
  std::unique_ptr<char[]> take_block();
  void give_back(std::unique_ptr<char[]> block);

private:
  void on_accept(listener* l);
  void ask(connection* c);
  void resolve(connection* c);
  void connect_next(connection* c);
  void on_connected(connection* c);
  void start_relay(connection* c);
  void refuse(connection* c, const egress_verdict& v, std::string failure);

  uv_loop_t* loop_;
  egress_limits limits_;
  connection_id next_conn_ = 1;
  std::unordered_map<process_id, caf::actor> deciders_;
  std::unordered_map<connection_id, connection*> connections_;
  std::unordered_map<uv_tcp_t*, std::unique_ptr<listener>> listeners_;
  std::unordered_map<process_id, std::size_t> open_per_process_;
  std::vector<std::unique_ptr<char[]>> spare_blocks_;  // kept up to kSpareBlocks
};

} // namespace corral
