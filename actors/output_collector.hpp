// The output collector: one per captured stream. It keeps what the I/O loop forwards (at
// most the cap: the loop is given exactly that much credit and discards, counting, the
// rest so the child never blocks) and, at EOF, reports the captured stream once.
#pragma once

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/exec_result.hpp"
#include "actors/io_events.hpp"

namespace corral {

// Cuts `data` (at most `cap` bytes) back to a UTF-8 boundary when output was dropped, so
// the kept text never ends inside a character, and appends a visible notice.
captured_stream finalize_capture(std::string data, std::uint64_t cap, std::uint64_t dropped);

// Sends stream_done{stream, captured} to `owner` at EOF, then quits.
caf::behavior output_collector(caf::event_based_actor* self, caf::actor owner, stream_kind stream,
                               std::uint64_t cap);

} // namespace corral
