#include "actors/egress/tls_client_hello.hpp"

#include <cctype>
#include <cstdint>

namespace corral {

namespace {

// A cursor that answers "not enough bytes" instead of reading past the end.
struct cursor {
  std::string_view b;
  std::size_t pos = 0;
  bool ok = true;

  std::size_t take(std::size_t n) {
    if (!ok || b.size() - pos < n) return ok = false, 0;
    std::size_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = v << 8 | static_cast<std::uint8_t>(b[pos + i]);
    pos += n;
    return v;
  }
  void skip(std::size_t n) {
    if (!ok || b.size() - pos < n) ok = false;
    else pos += n;
  }
};

} // namespace

client_hello peek_client_hello(std::string_view buf) {
  client_hello h;
  if (buf.empty()) return h;
  if (static_cast<std::uint8_t>(buf[0]) != 0x16) return h.status = hello_status::not_tls, h;
  if (buf.size() < 5) return h;
  if (static_cast<std::uint8_t>(buf[1]) != 0x03) return h.status = hello_status::not_tls, h;
  std::size_t record = static_cast<std::uint8_t>(buf[3]) << 8 | static_cast<std::uint8_t>(buf[4]);
  if (buf.size() < 5 + record) return h;
  // One record holds the whole ClientHello in practice (a few hundred bytes to ~2 KiB with
  // post-quantum key shares); a hello spread over records is refused as malformed.
  cursor c{buf.substr(5, record)};
  h.status = hello_status::malformed;
  if (c.take(1) != 0x01) return h;  // handshake type: client_hello
  std::size_t body = c.take(3);
  if (!c.ok || body > record - 4) return h;
  c.b = c.b.substr(0, 4 + body);
  c.skip(2 + 32);        // client version, random
  c.skip(c.take(1));     // session id
  c.skip(c.take(2));     // cipher suites
  c.skip(c.take(1));     // compression methods
  if (!c.ok) return h;
  if (c.pos == c.b.size()) return h.status = hello_status::no_sni, h;  // no extensions
  std::size_t ext_end = c.take(2);
  if (!c.ok || ext_end > c.b.size() - c.pos) return h;
  ext_end += c.pos;
  while (c.ok && c.pos + 4 <= ext_end) {
    std::size_t type = c.take(2), len = c.take(2);
    if (!c.ok || len > ext_end - c.pos) return h;
    if (type != 0) {
      c.skip(len);
      continue;
    }
    cursor s{c.b.substr(c.pos, len)};
    std::size_t list = s.take(2);
    if (!s.ok || list + 2 != len) return h;
    while (s.ok && s.pos < len) {
      std::size_t kind = s.take(1), n = s.take(2);
      if (!s.ok || n > len - s.pos) return h;
      if (kind == 0) {
        std::string name(s.b.substr(s.pos, n));
        for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        h.status = hello_status::sni;
        h.name = std::move(name);
        return h;
      }
      s.skip(n);
    }
    return h;
  }
  return h.status = c.ok ? hello_status::no_sni : hello_status::malformed, h;
}

} // namespace corral
