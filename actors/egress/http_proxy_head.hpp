// The request head a program sends the HTTP proxy: "CONNECT host:port HTTP/1.1" (a
// tunnel) or a plain forward request with an absolute URI ("GET http://host/path
// HTTP/1.1"), which is rewritten to origin form for the upstream. Bounded: the head
// must end within kMaxProxyHead bytes or it is refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace corral {

inline constexpr std::size_t kMaxProxyHead = 64 * 1024;

enum class head_status { incomplete, complete, malformed, too_large };

struct proxy_head {
  head_status status = head_status::incomplete;
  bool tunnel = false;   // CONNECT
  std::string host;      // name or IP literal (IPv6 without brackets)
  std::uint16_t port = 0;
  std::size_t length = 0;  // bytes of the head, including the blank line
  std::string upstream;    // forward requests: the head to send upstream
  std::string error;       // malformed: what was wrong, for the 400 answer
};

proxy_head parse_proxy_head(std::string_view buffer);

// "host:port" or "[v6]:port" into its parts; false when it is neither.
bool split_host_port(std::string_view text, std::string& host, std::uint16_t& port);

// A complete small HTTP response the proxy answers with before closing.
std::string proxy_response(int code, const std::string& reason, const std::string& body);

} // namespace corral
