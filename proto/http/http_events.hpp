// What http_loop tells a connection's actor, in this order: each http_request as it
// completes (answer them in order: HTTP/1.1 responses follow their requests), an
// http_written each time bytes given to http_loop::write() reached the socket, and one
// http_closed, always last.
#pragma once

#include <cstdint>
#include <string>

#include <caf/allowed_unsafe_message_type.hpp>

#include "proto/http/http_message.hpp"

namespace corral {

// The bytes of one write() call are in the kernel's socket buffer. An actor that streams
// keeps (bytes written) - (bytes acknowledged) under a window and pauses its producer
// above it: a client that reads slowly slows the stream instead of filling memory.
struct http_written {
  std::uint64_t bytes;
};

// The connection is gone: the client hung up or reset, was dropped (it stopped reading,
// sent no head in time, sent a request the loop refused), the actor asked for close(), or
// the loop is stopping. Nothing written after this goes anywhere.
struct http_closed {
  std::string reason;
};

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::http_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::http_written)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::http_closed)
