// The states every session actor (stdio and terminal) moves through, and why one ended.
//
//   starting ──lease acquired, helper spawned──▶ running ──close / idle / lifetime /
//     cancel / the child exits──▶ draining ──helper reaped, streams at EOF, lease
//     finished──▶ closed
//
// Failure edges: the lease or the plan fails, the spawn fails, the helper reports a failed
// start, or the startup deadline passes (starting ──▶ draining or closed, reason failed);
// the child's output breaks the framing (running ──▶ draining, reason failed); the owner
// dies (any ──▶ draining, reason cancelled).
#pragma once

#include <cstdint>

namespace corral {

enum class session_phase : std::uint8_t { starting, running, draining, closed };

enum class session_end_reason : std::uint8_t {
  closed,     // the owner closed it: EOF on stdin, the child left within the grace
  idle,       // no message either way for the idle deadline
  lifetime,   // the lifetime deadline passed
  exited,     // the child exited on its own
  cancelled,  // the owner cancelled it or died
  failed,     // it could not start, or its output could not be framed
};

inline const char* to_string(session_phase p) {
  switch (p) {
    case session_phase::starting: return "starting";
    case session_phase::running: return "running";
    case session_phase::draining: return "draining";
    case session_phase::closed: return "closed";
  }
  return "?";
}

inline const char* to_string(session_end_reason r) {
  switch (r) {
    case session_end_reason::closed: return "closed";
    case session_end_reason::idle: return "idle";
    case session_end_reason::lifetime: return "lifetime";
    case session_end_reason::exited: return "exited";
    case session_end_reason::cancelled: return "cancelled";
    case session_end_reason::failed: return "failed";
  }
  return "?";
}

} // namespace corral
