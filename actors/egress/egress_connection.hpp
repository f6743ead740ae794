// One proxied connection's state, private to the relay (actors/egress/egress_relay.cpp and
// actors/egress/egress_pipe.cpp). Every handle is embedded here; the struct is freed only once
// all of them are closed, so libuv callbacks never see freed memory.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "actors/egress/egress_relay.hpp"

namespace corral {

enum class connection_phase {
  greeting,    // SOCKS5: the method list
  request,     // HTTP head or SOCKS5 request
  asking,      // waiting for the actor (or the resolver): the program's bytes wait unread
  connecting,  // to one of the checked addresses
  hello,       // a tunnel to a name: the program's first bytes are held until they show
               // whether they are a ClientHello, whose SNI must be that name (any port:
               // TLS on 8443 is held to the same rule as on 443)
  relaying,    // both ways
  draining,    // refused: the answer is written and the write side shut; the rest of
               // what the program sends is read and dropped, so it reads the answer
               // rather than a reset, until EOF or kDrainBound
  closing,
};

struct egress_relay::connection {
  egress_relay* relay = nullptr;
  connection_id id = 0;
  process_id process = 0;
  listener_kind kind = listener_kind::http;
  egress_protocol protocol = egress_protocol::http_connect;
  connection_phase phase = connection_phase::request;
  uv_tcp_t client{};
  uv_tcp_t upstream{};
  uv_timer_t timer{};
  uv_connect_t connect_req{};
  int open_handles = 0;
  bool upstream_live = false;  // initialised and not yet closed
  std::string inbox;           // the program's bytes not yet passed on
  std::string forward_head;    // HTTP forward: the head for the upstream
  std::string host;
  std::uint16_t port = 0;
  std::chrono::milliseconds idle_timeout{0};  // the limits' bound, or a shorter one the actor gave
  std::vector<std::string> targets;
  std::size_t next_target = 0;
  std::string connected_to;
  std::uint64_t up = 0, down = 0;
  std::size_t queued_to_client = 0, queued_to_upstream = 0;
  bool client_paused = false, upstream_paused = false;
  bool client_eof = false, upstream_eof = false;
  std::string failure;
};

// The relay's byte moving: writes with accounting, backpressure, half-close, closing.
void send_bytes(egress_relay::connection* c, bool to_client, std::string bytes, bool close_after = false);
void read_client(egress_relay::connection* c, bool on);
void read_upstream(egress_relay::connection* c, bool on);
void close_connection(egress_relay::connection* c, std::string failure);
// Refused: shut the write side, read and drop what still comes, close on EOF or a bound.
void drain(egress_relay::connection* c);
void on_peer_eof(egress_relay::connection* c, bool from_client);
void touch(egress_relay::connection* c);  // restarts the idle bound

} // namespace corral
