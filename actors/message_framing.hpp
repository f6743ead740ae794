// Message framing for stdio sessions: how a byte stream is cut into messages and how a
// message is put back on the wire. Pure (no actors, no I/O), so each mode is testable alone.
//
//   raw             every chunk read is a message; nothing is added on the way in
//   newline         one message per line, '\n' excluded (MCP's stdio transport); a message
//                   may not contain '\n'
//   content_length  "Content-Length: N\r\n" (other headers allowed and passed over), a blank
//                   line, then N bytes (LSP style)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/failure.hpp"
#include "config/line_splitter.hpp"

namespace corral {

enum class framing_mode : std::uint8_t { raw, newline, content_length };

const char* to_string(framing_mode mode);
expected<framing_mode> parse_framing_mode(std::string_view name);

// One result of decoding: a complete message, or why one was refused. A refused message is
// skipped (the stream stays usable) unless `fatal` says the stream cannot be resynchronised.
struct decoded_frame {
  std::string message;
  std::optional<failure> error;
  bool fatal = false;
};

class frame_decoder {
public:
  frame_decoder(framing_mode mode, std::size_t max_message_bytes);

  // Appends the frames completed by `bytes` to `out`. After a fatal error every further
  // byte is ignored.
  void feed(std::string_view bytes, std::vector<decoded_frame>& out);
  // Bytes held for an incomplete message (bounded by the limit plus one header).
  std::size_t buffered() const { return mode_ == framing_mode::newline ? lines_.buffered() : buffer_.size(); }
  bool broken() const { return broken_; }

private:
  void feed_content_length(std::vector<decoded_frame>& out);
  failure too_large(std::uint64_t size) const;

  framing_mode mode_;
  std::size_t max_;
  line_splitter lines_;              // newline
  std::string buffer_;               // content_length
  std::uint64_t skipping_ = 0;       // content_length: body bytes of a refused message left
  std::optional<std::size_t> body_;  // content_length: the current message's length
  bool broken_ = false;
};

// The wire form of `message`, or why it cannot be sent (over the limit; a newline inside a
// newline-framed message).
expected<std::string> encode_frame(framing_mode mode, std::string_view message,
                                   std::size_t max_message_bytes);

} // namespace corral
