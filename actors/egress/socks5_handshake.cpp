#include "actors/egress/socks5_handshake.hpp"

#include <arpa/inet.h>

namespace corral {

namespace {

constexpr std::uint8_t kVersion = 5;

std::uint8_t at(std::string_view b, std::size_t i) { return static_cast<std::uint8_t>(b[i]); }

socks_request refused(socks_reply code, std::string why) {
  socks_request r;
  r.step = socks_step::refused;
  r.refusal = code;
  r.error = std::move(why);
  return r;
}

} // namespace

socks_greeting parse_socks_greeting(std::string_view b) {
  socks_greeting g;
  if (b.empty()) return g;
  if (at(b, 0) != kVersion) {
    g.step = socks_step::refused;  // not SOCKS5: no answer the client could read
    return g;
  }
  if (b.size() < 2) return g;
  std::size_t n = at(b, 1);
  if (b.size() < 2 + n) return g;
  g.length = 2 + n;
  for (std::size_t i = 0; i < n; ++i)
    if (at(b, 2 + i) == 0x00) {
      g.step = socks_step::complete;
      g.answer = std::string("\x05\x00", 2);
      return g;
    }
  g.step = socks_step::refused;
  g.answer = std::string("\x05\xff", 2);
  return g;
}

socks_request parse_socks_request(std::string_view b) {
  socks_request r;
  if (b.size() < 4) {
    if (!b.empty() && at(b, 0) != kVersion) return refused(socks_reply::general_failure, "not a SOCKS5 request");
    return r;
  }
  if (at(b, 0) != kVersion || at(b, 2) != 0) return refused(socks_reply::general_failure, "not a SOCKS5 request");
  if (at(b, 1) != 0x01) return refused(socks_reply::command_not_supported, "only CONNECT is supported");
  std::size_t addr_len = 0, start = 4;
  switch (at(b, 3)) {
    case 0x01: addr_len = 4; break;
    case 0x04: addr_len = 16; break;
    case 0x03:
      if (b.size() < 5) return r;
      addr_len = at(b, 4);
      start = 5;
      if (addr_len == 0) return refused(socks_reply::general_failure, "empty domain name");
      break;
    default: return refused(socks_reply::address_type_not_supported, "unknown address type");
  }
  if (b.size() < start + addr_len + 2) return r;
  auto addr = b.substr(start, addr_len);
  if (at(b, 3) == 0x03) {
    r.host = std::string(addr);
  } else {
    char text[INET6_ADDRSTRLEN] = {};
    ::inet_ntop(at(b, 3) == 0x01 ? AF_INET : AF_INET6, addr.data(), text, sizeof text);
    r.host = text;
  }
  r.port = static_cast<std::uint16_t>(at(b, start + addr_len) << 8 | at(b, start + addr_len + 1));
  if (r.port == 0) return refused(socks_reply::general_failure, "port 0");
  r.length = start + addr_len + 2;
  r.step = socks_step::complete;
  return r;
}

std::string socks_answer(socks_reply code) {
  std::string a("\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10);
  a[1] = static_cast<char>(code);
  return a;
}

} // namespace corral
