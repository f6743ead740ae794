// The Connect protocol's envelopes (connectrpc.com/docs/protocol, streaming RPCs): each
// message is 1 flag byte, a 4-byte big-endian length and the payload. E2B's envd streams
// process output this way; a stream ends with an end-stream envelope carrying the error
// (if any) and trailers as JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/failure.hpp"

namespace corral {

inline constexpr std::uint8_t kEnvelopeCompressed = 0x01;
inline constexpr std::uint8_t kEnvelopeEndStream = 0x02;

struct envelope_frame {
  std::uint8_t flags = 0;
  std::string_view payload;  // a view into the decoded body: keep the body alive

  bool end_stream() const { return (flags & kEnvelopeEndStream) != 0; }
};

// One envelope around `json` (uncompressed).
std::string envelope(std::string_view json, bool end_stream = false);

// Every envelope of a buffered body, in order. Refused: a compressed envelope (we announce
// no Connect-Content-Encoding, so a client must not send one), unknown flag bits, a
// payload over `max_message`, and a body that ends inside an envelope.
expected<std::vector<envelope_frame>> decode_envelopes(std::string_view body, std::size_t max_message);

} // namespace corral
