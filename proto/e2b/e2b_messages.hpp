// Messages among the E2B gateway's actors (CAF 0.17 atoms: at most 10 characters).
//
// connection -> gateway
//   (e2b_call_atom, http_request) -> http_response   every request; a stream's answer is only
//                                                   its failure (status 0: subscribed; its
//                                                   events follow from the process)
// process -> its subscribers (connections)
//   e2b_event        one event's JSON (start, data, end); the subscriber answers
//                    (ack_atom, 1) once it has passed it on and has room for more
//   e2b_stream_end   the end-stream frame's JSON; nothing follows
// anyone -> process
//   (e2b_subscribe_atom, caf::actor)    a Connect: the start event, then what comes
//   (input_atom, std::string, bool pty) -> http_response   SendInput
//   (stdin_eof_atom) -> http_response                       CloseStdin
//   (signal_atom, int) -> http_response                     SendSignal
//   (resize_atom, std::uint16_t rows, std::uint16_t cols) -> http_response   Update
//   (cancel_atom)                                           the sandbox ends
// process -> gateway
//   (e2b_gone_atom, std::string sandbox, std::uint32_t pid) it ended
#pragma once

#include <cstdint>
#include <string>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include "proto/http/http_message.hpp"

namespace corral {

using e2b_call_atom = caf::atom_constant<caf::atom("e2bcall")>;
using e2b_subscribe_atom = caf::atom_constant<caf::atom("e2bsub")>;
using e2b_gone_atom = caf::atom_constant<caf::atom("e2bgone")>;
using e2b_tick_atom = caf::atom_constant<caf::atom("e2btick")>;
using e2b_ping_atom = caf::atom_constant<caf::atom("e2bping")>;

// The gateway's answer to a stream call whose events a process or watch now sends the
// connection itself: no HTTP status of its own.
inline constexpr int kSubscribedStatus = 0;
inline http_response subscribed() {
  http_response r;
  r.status = kSubscribedStatus;
  return r;
}

struct e2b_event {
  std::string json;
};

struct e2b_stream_end {
  std::string json;
};

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::e2b_event)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::e2b_stream_end)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::http_response)
