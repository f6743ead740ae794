// The output collector: one per captured stream. It keeps what the I/O loop forwards (at
// most the cap: the loop is given exactly that much credit and discards, counting, the
// rest so the child never blocks) and, at EOF, reports the captured stream once.
//
// With a live subscriber the credit comes one window at a time: each output_chunk the
// subscriber gets must be acknowledged, (ack_atom, bytes) to the chunk's sender, once it
// has been passed on. While a window is unacknowledged the loop stops reading and the
// child blocks on its full pipe, so a lagging subscriber (a daemon client reading slowly)
// slows the child instead of filling the runtime's memory. Past the cap the rest is
// discarded as without a subscriber.
#pragma once

#include <cstdint>
#include <string_view>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/exec_result.hpp"
#include "actors/io/io_events.hpp"
#include "actors/io/io_loop.hpp"

namespace corral {

// Cuts `data` (at most `cap` bytes) back to a UTF-8 boundary when output was dropped, so
// the kept text never ends inside a character. Nothing is appended: the kept bytes are the
// program's own, never more than the cap; `truncated` and `dropped_bytes` say the rest.
captured_stream finalize_capture(std::string data, std::uint64_t cap, std::uint64_t dropped);

// A piece of kept output, forwarded live to a subscriber (streaming to an agent UI).
struct output_chunk {
  stream_kind stream;
  std::string bytes;
};

// Unacknowledged live output per stream before the child is made to wait.
inline constexpr std::uint64_t kLiveOutputWindow = 1u << 20;

// The I/O loop's route for a collector's stream (see above): the whole cap at once, or
// with a live subscriber one window paced by its acknowledgements.
output_route collector_route(caf::actor collector, std::uint64_t cap, bool live);

// Sends stream_done{stream, captured} to `owner` at EOF, then quits. With a `live`
// subscriber, each kept piece also goes to it as output_chunk, so what streams is exactly
// what the result keeps (never past the cap); its acknowledgements grant `io` more credit.
caf::behavior output_collector(caf::event_based_actor* self, caf::actor owner, stream_kind stream,
                               std::uint64_t cap, caf::actor live = {}, io_loop* io = nullptr);

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::output_chunk)
