// Bytes to lines under a bound: the daemon's JSON-RPC connections and the stdio sessions'
// newline framing both cut a stream this way. A line longer than the bound is reported once
// and skipped up to its newline, so one huge line neither grows memory nor ends the stream.
// Pure (no I/O); in config/, the lowest floor, so actors and proto both reach it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace corral {

class line_splitter {
public:
  // JSON-RPC clients may end lines with "\r\n"; a session's newline framing passes bytes on
  // as they came.
  enum class carriage_return : std::uint8_t { keep, strip };

  line_splitter(std::size_t max_line, carriage_return cr) : max_(max_line), cr_(cr) {}

  struct piece {
    bool oversized = false;
    std::string line;       // without the newline (and, with strip, without a trailing '\r')
    std::size_t size = 0;   // oversized: the bytes of the line seen when it was refused (all
                            // of it when its newline had arrived by then)
  };
  std::vector<piece> feed(std::string_view bytes);
  std::size_t max_line() const { return max_; }
  std::size_t buffered() const { return partial_.size(); }  // of a line not yet ended

private:
  std::size_t max_;
  carriage_return cr_;
  std::string partial_;
  bool skipping_ = false;
};

} // namespace corral
