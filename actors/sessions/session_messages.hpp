// What sessions accept and what they tell their owner. One header for both session kinds.
//
// Stdio session (actors/sessions/stdio_session.hpp), from its owner:
//   (send_atom, std::string message) -> session_reply  framed and written to the child's
//        stdin; the reply comes once the input queue is under its bound (backpressure) or
//        says why the message was refused (over the limit, a newline in newline framing,
//        the session no longer running)
//   (ack_atom, std::uint64_t n)                        the owner can take n more messages
//   (close_atom)                                       graceful: EOF on stdin, grace, terminate
//   (stdin_eof_atom)                                   EOF on stdin after what was sent; the
//                                                      child runs on (E2B's CloseStdin)
//   (cancel_atom)                                      terminate now through the lease
//   (info_atom) -> session_info
// To its owner, in this order and never dropped:
//   session_message   one framed message of the child's stdout (only while credit lasts)
//   session_refused   a message of the child's the framing refused (skipped; the session
//                     goes on unless the stream cannot be resynchronised)
//   session_stderr    a chunk of the child's stderr, only with forward_stderr
//   session_gate      the MCP gateway refused, filtered or checked a pin (not for messages
//                     it passed unchanged: those are only in the audit file)
//   session_network   one proxied connection's audit record, as it ends (allowlist mode)
//   session_ended     last: why, how the child exited, the tail of its stderr, the
//                     network audit (allowlist mode)
//
// Terminal session (actors/sessions/terminal_session.hpp), from anyone holding its handle:
//   (attach_atom, caf::actor viewer, bool writer, bool take_over) -> terminal_attached
//        the scrollback; then terminal_output goes to `viewer` as to every other viewer.
//        At most one viewer is the writer: a second is refused unless `take_over`, which
//        demotes the first to a viewer (it hears terminal_demoted).
//   (reattach_atom, caf::actor client) -> std::string  the same as attach as the writer,
//                                                      taking over
//   (detach_atom, caf::actor viewer)                   that viewer hears no more
//   (detach_atom)                                      nobody does: output only to the scrollback
//   (watch_atom, caf::actor watcher)                   terminal_viewers to `watcher` now and
//                                                      whenever who is attached changes
//   (input_atom, std::string bytes)                    written to the pty master
//   (resize_atom, std::uint16_t rows, std::uint16_t cols)
//   (cancel_atom), (info_atom) -> session_info
// To every viewer: terminal_output and session_network, then session_ended. The writer is
// a promise among viewers, kept by whoever relays input (the daemon refuses a viewer's
// writes); the actor itself takes input from any holder of its handle.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>

#include "actors/exec_result.hpp"
#include "actors/message_framing.hpp"
#include "actors/sessions/session_state.hpp"
#include "config/failure.hpp"
#include "config/mcp_policy.hpp"

namespace corral {

inline constexpr std::chrono::milliseconds kNoDeadline{0};

// A long-lived child with framed stdio. Limits only tighten the profile, as for exec.
struct session_request {
  std::vector<std::string> argv;  // argv[0] resolved against the caller's PATH by the tier
  std::map<std::string, std::string> env;  // on top of the profile's environment
  std::string tier;                        // empty: the profile's tier
  framing_mode framing = framing_mode::newline;
  std::size_t max_message_bytes = 4 * 1024 * 1024;
  std::size_t stderr_log_bytes = 64 * 1024;  // the last bytes of stderr kept for the end report
  // Also send each stderr chunk to the owner as session_stderr (outside the credit: the
  // owner must keep up, as a proxy writing it to its own stderr does).
  bool forward_stderr = false;
  // Bytes read from the child ahead of the owner (undelivered messages plus read credit);
  // past it the runtime stops reading and the child blocks on its full stdout.
  std::size_t output_window_bytes = 256 * 1024;
  // Bytes written to stdin and not yet taken by the pipe before a send waits.
  std::size_t input_window_bytes = 256 * 1024;
  std::uint64_t initial_credit = 64;  // messages the owner takes before its first ack
  std::chrono::milliseconds startup_timeout{30'000};
  std::chrono::milliseconds idle_timeout = kNoDeadline;      // no message either way
  std::chrono::milliseconds lifetime = kNoDeadline;          // from the start
  std::chrono::milliseconds close_grace{2'000};              // after EOF on stdin
  std::optional<std::uint64_t> memory_limit_bytes;
  std::optional<std::uint64_t> pids_limit;
  std::optional<double> cpu_cores;
  // Narrows the profile's network allow-list (allowlist mode only; config/tighten_network.hpp).
  std::optional<std::vector<std::string>> network_allow;
  // Run in this workspace (id or name): its files are the child's /work (as exec's, see
  // exec_request::workspace); `principal` must be its owner's.
  std::string workspace;
  std::string principal = "lib";
  std::string cwd;  // where the child starts (exec_request::cwd)
  // In-process only (`corral mcp`): this process's own descriptors to relay the child's
  // messages to and from, on the I/O loop's thread with no actor in between
  // (io_loop::relay). Newline framing only; send and ack are not used then. -1: messages
  // go through the owner (session_message, send_atom, ack_atom).
  int relay_from_fd = -1;  // the client's messages for the child (a pipe or socket)
  int relay_to_fd = -1;    // where the child's messages go (a pipe or socket)
  // The MCP gateway's policy for this session, on top of the profile's [mcp] (both apply:
  // it can only narrow). Unset, and the profile's transparent: messages pass unchanged.
  std::optional<mcp_policy> mcp;
};

// A pty child. It outlives the call that opened it; it ends when the child exits, on
// cancel, or at its lifetime deadline.
struct terminal_request {
  std::vector<std::string> argv;  // empty: /bin/sh
  std::map<std::string, std::string> env;  // TERM defaults to xterm-256color
  std::string tier;
  std::uint16_t rows = 24;
  std::uint16_t cols = 80;
  bool echo = true;  // false: programmatic use, input is not echoed back
  std::size_t scrollback_bytes = 256 * 1024;
  std::chrono::milliseconds startup_timeout{30'000};
  std::chrono::milliseconds lifetime = kNoDeadline;
  std::optional<std::uint64_t> memory_limit_bytes;
  std::optional<std::uint64_t> pids_limit;
  std::optional<double> cpu_cores;
  // Narrows the profile's network allow-list (allowlist mode only; config/tighten_network.hpp).
  std::optional<std::vector<std::string>> network_allow;
  // Run in this workspace (id or name): its files are the child's /work (as exec's, see
  // exec_request::workspace); `principal` must be its owner's.
  std::string workspace;
  std::string principal = "lib";
  std::string cwd;  // where the child starts (exec_request::cwd)
};

// The runtime's answer to opening a session: its actor, or why there is none.
struct session_opened {
  bool ok = false;
  failure error;
  caf::actor session;
  std::uint64_t number = 0;
  // A terminal in a workspace with a holder belongs to the workspace, not to its caller:
  // it outlives the caller, and is found again by this id (resident_terminal_id) in it.
  std::string terminal;
  std::string workspace;  // its id
};

// What the runtime's open_session/open_terminal return.
struct session_handle {
  caf::actor actor;
  std::uint64_t number = 0;  // carried by every message the session sends
};

struct session_reply {
  bool ok = false;
  failure error;
};

struct session_message {
  std::uint64_t session = 0;  // session_opened::number
  std::uint64_t seq = 0;      // 0, 1, 2… in the child's order
  std::string body;
};

struct session_refused {
  std::uint64_t session = 0;
  failure error;
};

// What the session's MCP gateway decided that its owner should hear: each refusal, filtered
// listing and pin check as its audit line (JSON), and warnings for the operator's log.
struct session_gate {
  std::uint64_t session = 0;
  std::vector<std::string> decisions;
  std::vector<std::string> warnings;
};

struct session_stderr {
  std::uint64_t session = 0;
  std::string bytes;
};

// One connection through the session's egress proxy, reported as it ends.
struct session_network {
  std::uint64_t session = 0;
  network_event event;
};

struct terminal_output {
  std::uint64_t session = 0;
  std::string bytes;
};

// The answer to attaching to a terminal: what it showed so far, and whether this viewer
// is the one that writes.
struct terminal_attached {
  bool ok = false;
  failure error;
  std::string scrollback;
  bool writer = false;
};

// To a writer whose place another viewer took over: it goes on as a viewer.
struct terminal_demoted {
  std::uint64_t session = 0;
};

// To a terminal's watcher: how many viewers it has now, and whether one of them writes.
struct terminal_viewers {
  std::uint64_t session = 0;
  std::uint32_t viewers = 0;
  bool writer = false;
};

struct session_ended {
  std::uint64_t session = 0;
  session_end_reason reason = session_end_reason::exited;
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  std::string detail;       // for failed: what went wrong
  std::string stderr_tail;  // stdio: the stderr log; terminal: the scrollback's tail
  std::uint64_t messages_out = 0;
  std::uint64_t messages_in = 0;
  std::optional<network_audit> network;  // allowlist network mode only
};

struct session_info {
  std::uint64_t session = 0;
  session_phase phase = session_phase::starting;
  std::string tier;
  std::string isolation;
  long pid = 0;  // the exec helper's pid on the host
  std::uint64_t messages_out = 0;
  std::uint64_t messages_in = 0;
  std::uint64_t buffered_bytes = 0;  // held by the runtime for this session right now
};

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::session_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::terminal_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::session_opened)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::session_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::session_message)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::session_refused)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::session_stderr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::session_gate)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::session_network)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::terminal_output)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::terminal_attached)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::terminal_demoted)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::terminal_viewers)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::session_ended)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::session_info)
