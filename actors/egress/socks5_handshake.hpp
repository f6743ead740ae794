// The SOCKS5 handshake (RFC 1928) as the egress proxy takes it: no authentication, the
// CONNECT command, IPv4, domain and IPv6 address types. Anything else is answered with
// the RFC's reply code and the connection is closed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace corral {

enum class socks_step { incomplete, complete, refused };

// RFC 1928 reply codes.
enum class socks_reply : std::uint8_t {
  succeeded = 0x00,
  general_failure = 0x01,
  not_allowed = 0x02,
  network_unreachable = 0x03,
  host_unreachable = 0x04,
  connection_refused = 0x05,
  command_not_supported = 0x07,
  address_type_not_supported = 0x08,
};

struct socks_greeting {
  socks_step step = socks_step::incomplete;
  std::size_t length = 0;
  std::string answer;  // what to send back (method chosen, or 0xff)
};

// The client's method list; only "no authentication" (0x00) is accepted.
socks_greeting parse_socks_greeting(std::string_view buf);

struct socks_request {
  socks_step step = socks_step::incomplete;
  std::size_t length = 0;
  std::string host;  // a name, or an IP literal (IPv6 without brackets)
  std::uint16_t port = 0;
  socks_reply refusal = socks_reply::general_failure;  // when refused
  std::string error;
};

socks_request parse_socks_request(std::string_view buf);

// The reply to a request: code, and a zero bound address (the program has no use for it).
std::string socks_answer(socks_reply code);

} // namespace corral
