// What the libuv I/O loop tells actors. The loop owns descriptors and child processes; it
// decides nothing. Each event names the process it concerns by the id the child_launcher
// gave it (actors/launch/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>

#include "actors/mcp/mcp_gate.hpp"
#include "tiers/jail/status_line.hpp"

namespace corral {

using process_id = std::uint64_t;

enum class stream_kind : std::uint8_t { out = 0, err = 1 };

struct io_spawned {
  process_id id;
  long pid;
};

struct io_spawn_failed {
  process_id id;
  int error_number;
  std::string what;
};

struct io_chunk {
  process_id id;
  stream_kind stream;
  std::string bytes;
};

// The stream reached EOF (or was closed); `dropped` counts bytes read past the credit and
// discarded, so the collector can report what it did not keep.
struct io_eof {
  process_id id;
  stream_kind stream;
  std::uint64_t dropped;
};

struct io_status {
  process_id id;
  status_line line;
};

// The spawned process (the exec helper) was reaped.
struct io_exited {
  process_id id;
  int wait_status;
};

// stdin was fully written and closed (error_number 0), or the child stopped reading it
// (EPIPE) — not an error for the execution: a program may ignore its input.
struct io_stdin_closed {
  process_id id;
  int error_number;
};

// A write to stdin completed (sent only when the spawn asked for report_writes): sessions
// count bytes in flight to bound their input queue.
struct io_written {
  process_id id;
  std::uint64_t bytes;
};

// A relay (io_loop::relay) moved messages: its counts so far. Sent at most every 100 ms
// while messages flow, and once more when the child's stdout ends.
struct io_relay_activity {
  process_id id;
  std::uint64_t messages_in;   // client -> child
  std::uint64_t messages_out;  // child -> client
};

// A relay dropped a message over the size limit (the stream stays usable).
struct io_relay_refused {
  process_id id;
  bool toward_child;  // from the client; else from the child
  std::string why;
};

// The client's side of a relay ended: its input reached EOF (or failed), or its output
// can no longer be written (the client went away).
enum class relay_end : std::uint8_t { client_eof, client_gone };
struct io_relay_closed {
  process_id id;
  relay_end what;
};

// A relay's MCP gateway (relay_ends::gate) decided: what it refused, filtered or, with an
// audit file, everything; and what the operator should read (a pin change and its diff).
struct io_relay_gate {
  process_id id;
  std::vector<mcp_decision> decisions;
  std::vector<std::string> warnings;
};

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_spawned)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_spawn_failed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_chunk)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_eof)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_status)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_exited)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_stdin_closed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_written)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_relay_activity)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_relay_refused)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_relay_closed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::io_relay_gate)
