// What the egress proxy's two halves say to each other: the I/O loop (actors/egress_relay,
// owning every socket) asks; the egress_proxy actor (owning every decision) answers; the
// loop reports each connection's end; the actor keeps the audit (network_event).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include "actors/exec_result.hpp"
#include "actors/io/io_events.hpp"
#include "config/egress_decision.hpp"

namespace corral {

using connection_id = std::uint64_t;

// Execution → egress_proxy: the audit, once every connection has reported its end.
using audit_atom = caf::atom_constant<caf::atom("egaudit")>;
// egress_proxy → itself: stop waiting for connections that have not reported.
using audit_due_atom = caf::atom_constant<caf::atom("egauditdue")>;

enum class egress_protocol : std::uint8_t { http_connect, http_forward, socks5 };
const char* to_string(egress_protocol p);

// Loop → actor. First with the destination as the program named it; again with
// `resolved` set once the loop's resolver answered (when the actor asked for that).
struct egress_ask {
  connection_id conn = 0;
  process_id process = 0;
  egress_protocol protocol = egress_protocol::http_connect;
  std::string host;
  std::uint16_t port = 0;
  bool resolved = false;
  std::vector<std::string> addresses;  // resolved: what the resolver found
  std::string resolve_error;           // resolved: why it found nothing
};

enum class egress_next : std::uint8_t {
  refuse,   // answer the program with `verdict` and close
  resolve,  // the name is allowed: resolve it (system resolver) and ask again
  connect,  // connect to `addresses`, every one checked, in order
};

// Actor → loop (io_loop::egress_answer).
struct egress_answer {
  connection_id conn = 0;
  egress_next next = egress_next::refuse;
  egress_verdict verdict;
  std::vector<std::string> addresses;
  std::chrono::milliseconds idle_timeout{0};  // connect: a shorter idle bound (tests); zero: the relay's
};

// Loop → actor: the connection is closed (by either side, the idle bound or the end of
// the execution). `failure` is empty for an ordinary end.
struct egress_closed {
  connection_id conn = 0;
  std::uint64_t bytes_up = 0;    // program → destination
  std::uint64_t bytes_down = 0;  // destination → program
  std::string connected_to;      // the address the relay connected to, if any
  std::string failure;           // e.g. "connect: connection refused", "sni_mismatch: …"
};

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::egress_ask)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::egress_answer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::egress_closed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::network_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::network_audit)
