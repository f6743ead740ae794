// Bytes of one HTTP/1.1 connection in, complete requests out: the nodejs http-parser
// behind the limits http_loop promises (head size, body size, 100-continue, one request
// after Connection: close). No I/O, so every refusal is testable without a socket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/http/http_message.hpp"

namespace corral {

struct request_refusal {
  int status;           // 400, 413, 431, 505
  std::string message;  // what was wrong, for the response body and the close reason
};

class request_reader {
public:
  struct output {
    std::vector<http_request> requests;     // complete, in arrival order
    bool continue_expected = false;         // a head asked for 100 Continue and its body is still to come
    std::optional<request_refusal> refused;  // answer with it and close: nothing more is read
  };

  request_reader(std::uint64_t connection, std::size_t max_head_bytes, std::size_t max_body_bytes);
  ~request_reader();
  request_reader(const request_reader&) = delete;
  request_reader& operator=(const request_reader&) = delete;

  output feed(std::string_view bytes);

  // From the start until the first head is complete, and from a later request's first
  // byte until its head is complete: while this holds, the slowloris clock runs. (Idle
  // time between requests is not a head being sent slowly.)
  bool awaiting_head() const;
  // A request without keep-alive was read, or one was refused: later bytes are ignored.
  bool finished() const;

private:
  struct state;
  std::unique_ptr<state> state_;
};

} // namespace corral
