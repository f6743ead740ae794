// HTTP/1.1 requests and responses as values: what http_loop hands a connection actor and
// the bytes an actor writes back. Pure, no I/O, so every rule here is testable alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace corral {

using http_headers = std::vector<std::pair<std::string, std::string>>;

struct http_request {
  std::uint64_t connection = 0;
  std::string method;      // "GET", "POST", ... as the parser names it
  std::string path;        // percent-decoded, without the query
  std::string raw_target;  // the request target exactly as sent
  std::string query;       // raw, without the '?'
  http_headers headers;    // names lower-cased, in arrival order, repeats kept
  std::string body;        // whole (chunked bodies already decoded)
  bool keep_alive = true;  // false: answer, then close the connection (Connection: close, HTTP/1.0)

  // The first header named `lower_name`, or nullptr.
  const std::string* header(std::string_view lower_name) const;
  // The first query parameter `name`, percent-decoded with '+' as a space; nullopt when
  // absent or undecodable.
  std::optional<std::string> query_param(std::string_view name) const;
};

struct http_response {
  int status = 200;
  http_headers headers;
  std::string body;
};

// Status line, headers and body. Content-Length is added from the body unless the caller
// set one (an answer to HEAD sets it and leaves the body empty); 1xx, 204 and 304 get none.
std::string serialize(const http_response& response);
// The head of a response whose body follows as chunk()s and ends with last_chunk().
std::string stream_head(int status, const http_headers& headers);
// One chunk; empty for empty bytes, since a zero-length chunk would end the body.
std::string chunk(std::string_view bytes);
std::string last_chunk();

// %XX escapes decoded (and '+' as a space when asked: query strings, forms). nullopt for a
// malformed escape or a decoded NUL, which no path or parameter may carry.
std::optional<std::string> percent_decode(std::string_view text, bool plus_as_space = false);
const char* reason_phrase(int status);

} // namespace corral
