// The egress proxy's parsers alone: the HTTP proxy head, the SOCKS5 handshake and the
// TLS ClientHello's server name, including what an attacker would send them.
#include <catch2/catch.hpp>

#include "actors/egress/http_proxy_head.hpp"
#include "actors/egress/socks5_handshake.hpp"
#include "actors/egress/tls_client_hello.hpp"

using namespace corral;

namespace {

std::string u16(std::size_t v) { return {static_cast<char>(v >> 8), static_cast<char>(v & 0xff)}; }
std::string u24(std::size_t v) { return std::string(1, static_cast<char>(v >> 16)) + u16(v & 0xffff); }

// A minimal TLS 1.2-style ClientHello record, with an SNI extension when `sni` is set.
std::string tls_hello_record(const std::string& sni) {
  std::string ext;
  if (!sni.empty()) {
    std::string entry = std::string(1, '\0') + u16(sni.size()) + sni;
    std::string list = u16(entry.size()) + entry;
    ext = u16(0) + u16(list.size()) + list;
  }
  ext = u16(0x000b) + u16(2) + std::string("\x01\x00", 2) + ext;  // ec_point_formats first
  std::string body = std::string("\x03\x03", 2) + std::string(32, 'r') + std::string(1, '\0') + u16(2) +
                     std::string("\x13\x01", 2) + std::string("\x01\x00", 2) + u16(ext.size()) + ext;
  std::string hs = std::string(1, '\x01') + u24(body.size()) + body;
  return std::string("\x16\x03\x01", 3) + u16(hs.size()) + hs;
}

} // namespace

TEST_CASE("the proxy head parser takes CONNECT and absolute-URI requests", "[egress]") {
  auto c = parse_proxy_head("CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\nEARLY");
  REQUIRE(c.status == head_status::complete);
  CHECK(c.tunnel);
  CHECK(c.host == "api.github.com");
  CHECK(c.port == 443);
  CHECK(c.length == std::string("CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n").size());

  auto v6 = parse_proxy_head("CONNECT [2001:db8::1]:8443 HTTP/1.1\r\n\r\n");
  REQUIRE(v6.status == head_status::complete);
  CHECK(v6.host == "2001:db8::1");
  CHECK(v6.port == 8443);

  auto f = parse_proxy_head("GET http://pypi.org/simple/x/?a=1 HTTP/1.1\r\nHost: pypi.org\r\n"
                            "Proxy-Connection: keep-alive\r\nProxy-Authorization: x\r\nAccept: */*\r\n\r\n");
  REQUIRE(f.status == head_status::complete);
  CHECK_FALSE(f.tunnel);
  CHECK(f.host == "pypi.org");
  CHECK(f.port == 80);
  CHECK(f.upstream == "GET /simple/x/?a=1 HTTP/1.1\r\nHost: pypi.org\r\nAccept: */*\r\nConnection: close\r\n\r\n");

  auto no_host = parse_proxy_head("GET http://example.org:8080 HTTP/1.0\r\n\r\n");
  REQUIRE(no_host.status == head_status::complete);
  CHECK(no_host.port == 8080);
  CHECK(no_host.upstream == "GET / HTTP/1.0\r\nHost: example.org:8080\r\nConnection: close\r\n\r\n");

  CHECK(parse_proxy_head("CONNECT a.org:443 HTTP/1.1\r\n").status == head_status::incomplete);
}

TEST_CASE("the proxy head parser refuses garbage, origin-form and oversized heads", "[egress]") {
  CHECK(parse_proxy_head("GET / HTTP/1.1\r\nHost: x\r\n\r\n").status == head_status::malformed);
  CHECK(parse_proxy_head("GET https://x.org/ HTTP/1.1\r\n\r\n").status == head_status::malformed);
  CHECK(parse_proxy_head("CONNECT x.org HTTP/1.1\r\n\r\n").status == head_status::malformed);
  CHECK(parse_proxy_head("CONNECT x.org:0 HTTP/1.1\r\n\r\n").status == head_status::malformed);
  CHECK(parse_proxy_head("CONNECT x.org:443 HTTP/2\r\n\r\n").status == head_status::malformed);
  CHECK(parse_proxy_head("GET http://u:p@x.org/ HTTP/1.1\r\n\r\n").status == head_status::malformed);
  CHECK(parse_proxy_head(std::string("\x16\x03\x01\x00\x10", 5)).status == head_status::malformed);
  CHECK(parse_proxy_head("GET http://x.org/ HTTP/1.1\r\nno colon here\r\n\r\n").status == head_status::malformed);
  std::string huge = "GET http://x.org/ HTTP/1.1\r\nX: " + std::string(kMaxProxyHead, 'a');
  CHECK(parse_proxy_head(huge).status == head_status::too_large);
  CHECK(parse_proxy_head(huge + "\r\n\r\n").status == head_status::too_large);
}

TEST_CASE("the SOCKS5 handshake takes no-auth CONNECT with all three address types", "[egress]") {
  auto g = parse_socks_greeting(std::string("\x05\x02\x02\x00", 4));
  REQUIRE(g.step == socks_step::complete);
  CHECK(g.answer == std::string("\x05\x00", 2));
  CHECK(g.length == 4);
  auto auth_only = parse_socks_greeting(std::string("\x05\x01\x02", 3));
  CHECK(auth_only.step == socks_step::refused);
  CHECK(auth_only.answer == std::string("\x05\xff", 2));
  CHECK(parse_socks_greeting(std::string("\x04\x01", 2)).step == socks_step::refused);
  CHECK(parse_socks_greeting(std::string("\x05\x03\x00", 3)).step == socks_step::incomplete);

  auto name = parse_socks_request(std::string("\x05\x01\x00\x03\x08pypi.org\x01\xbb", 15));
  REQUIRE(name.step == socks_step::complete);
  CHECK(name.host == "pypi.org");
  CHECK(name.port == 443);
  CHECK(name.length == 15);
  auto v4 = parse_socks_request(std::string("\x05\x01\x00\x01\x0a\x01\x02\x03\x15\x38", 10));
  REQUIRE(v4.step == socks_step::complete);
  CHECK(v4.host == "10.1.2.3");
  CHECK(v4.port == 5432);
  std::string v6req("\x05\x01\x00\x04", 4);
  v6req += std::string(15, '\0') + "\x01" + std::string("\x00\x50", 2);
  auto v6 = parse_socks_request(v6req);
  REQUIRE(v6.step == socks_step::complete);
  CHECK(v6.host == "::1");

  CHECK(parse_socks_request(std::string("\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50", 10)).refusal ==
        socks_reply::command_not_supported);
  CHECK(parse_socks_request(std::string("\x05\x01\x00\x09", 4)).refusal == socks_reply::address_type_not_supported);
  CHECK(parse_socks_request(std::string("\x05\x01\x00\x03\x00\x00\x50", 7)).step == socks_step::refused);
  CHECK(parse_socks_request(std::string("\x05\x01\x00\x03\x08pypi", 9)).step == socks_step::incomplete);
  CHECK(socks_answer(socks_reply::not_allowed) == std::string("\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00", 10));
}

TEST_CASE("the ClientHello peek finds the server name and survives truncation", "[egress]") {
  auto hello = tls_hello_record("API.GitHub.com");
  auto h = peek_client_hello(hello);
  REQUIRE(h.status == hello_status::sni);
  CHECK(h.name == "api.github.com");
  CHECK(peek_client_hello(tls_hello_record("")).status == hello_status::no_sni);
  // Every prefix is incomplete, never a crash or a wrong name.
  for (std::size_t n = 0; n < hello.size(); ++n) CHECK(peek_client_hello(hello.substr(0, n)).status == hello_status::incomplete);
  CHECK(peek_client_hello("GET / HTTP/1.1\r\n").status == hello_status::not_tls);
  CHECK(peek_client_hello("SSH-2.0-OpenSSH").status == hello_status::not_tls);
  // Lengths that lie about what follows are malformed, not read past.
  auto lying = hello;
  lying[7] = '\x7f';  // the handshake body length's middle byte
  CHECK(peek_client_hello(lying).status == hello_status::malformed);
  std::string not_hello = hello;
  not_hello[5] = '\x02';  // server_hello
  CHECK(peek_client_hello(not_hello).status == hello_status::malformed);
}
