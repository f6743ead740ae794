// The egress proxy end to end on the landlock tier: programs inside the jail reach an
// allowed name only through the proxy, everything else is refused with the rule, and the
// audit in the result says what happened. Servers are stubs on the host's 127.0.0.1,
// reached through test names and an explicit 127.0.0.1/32 allow entry.
#include <catch2/catch.hpp>

#include "tests/egress_fixture.hpp"

using namespace corral;
using namespace corral::testing;

namespace {

std::string port_of(const stub_server& s) { return std::to_string(s.port()); }

} // namespace

TEST_CASE("an allowed name is reached through the proxy by curl and python, and audited", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kCurl) || !have(kPython)) { WARN("skipped: needs " << kCurl << " and " << kPython); return; }
  stub_server app("hello from app\n");
  auto port = port_of(app);
  test_runtime rt(egress_profile("allow = [\"app.test:" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                                 {{"app.test", {"127.0.0.1"}}}),
                  false);

  SECTION("curl, plain forward (HTTP_PROXY)") {
    auto r = run_ok(rt, program({kCurl, "-sS", "-m", "10", "http://app.test:" + port + "/fwd"}));
    CHECK(r.exit_code == 0);
    CHECK(r.out.data == "hello from app\n");
    REQUIRE(app.received().size() == 1);
    CHECK_THAT(app.received()[0], Catch::StartsWith("GET /fwd HTTP/1.1\r\n"));
    auto* e = find_event(r, "app.test");
    REQUIRE(e);
    CHECK(e->decision == "allowed");
    CHECK(e->protocol == "http_forward");
    CHECK(e->rule == "app.test:" + port);
    CHECK(e->addresses == std::vector<std::string>{"127.0.0.1"});
    CHECK(e->bytes_down > 0);
    CHECK(e->bytes_up == 0);  // the rewritten head is the proxy's, the program sent no body
  }
  SECTION("curl, CONNECT tunnel") {
    auto r = run_ok(rt, program({kCurl, "-sS", "-m", "10", "--proxytunnel", "http://app.test:" + port + "/tun"}));
    CHECK(r.exit_code == 0);
    CHECK(r.out.data == "hello from app\n");
    auto* e = find_event(r, "app.test");
    REQUIRE(e);
    CHECK(e->protocol == "http_connect");
    CHECK(e->bytes_up > 0);
    CHECK(e->bytes_down > 0);
  }
  SECTION("curl, SOCKS5 with the name resolved by the proxy") {
    auto r = run_ok(rt, program({kCurl, "-sS", "-m", "10", "--proxy", "socks5h://127.0.0.1:1080",
                                 "http://app.test:" + port + "/socks"}));
    CHECK(r.exit_code == 0);
    CHECK(r.out.data == "hello from app\n");
    auto* e = find_event(r, "app.test");
    REQUIRE(e);
    CHECK(e->protocol == "socks5");
    CHECK(e->decision == "allowed");
  }
  SECTION("python urllib") {
    auto r = run_ok(rt, program({kPython, "-c",
                                 "import urllib.request;print(urllib.request.urlopen('http://app.test:" + port +
                                     "/py', timeout=10).read().decode(), end='')"}));
    CHECK(r.exit_code == 0);
    CHECK(r.out.data == "hello from app\n");
  }
}

TEST_CASE("denied and unlisted names get a 403 naming the rule and the key", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kCurl)) { WARN("skipped: needs " << kCurl); return; }
  stub_server app("should not be reached\n");
  auto port = port_of(app);
  test_runtime rt(egress_profile("allow = [\"*.corp.test:" + port + "\", \"127.0.0.1/32:" + port +
                                     "\"]\ndeny = [\"uploads.corp.test\"]\n",
                                 {{"uploads.corp.test", {"127.0.0.1"}}, {"other.test", {"127.0.0.1"}}}),
                  false);
  auto curl = [&](const std::string& host) {
    return run_ok(rt, program({kCurl, "-sS", "-m", "10", "-w", "\\n%{http_code}", "http://" + host + ":" + port + "/"}));
  };
  auto denied = curl("uploads.corp.test");
  CHECK_THAT(denied.out.data, Catch::EndsWith("\n403"));
  CHECK_THAT(denied.out.data, Catch::Contains("denied by the entry \"uploads.corp.test\" in [sandbox.network] deny"));
  auto* e = find_event(denied, "uploads.corp.test");
  REQUIRE(e);
  CHECK(e->decision == "denied");
  CHECK(e->rule == "uploads.corp.test");

  auto unlisted = curl("other.test");
  CHECK_THAT(unlisted.out.data, Catch::EndsWith("\n403"));
  CHECK_THAT(unlisted.out.data, Catch::Contains("not on the allow-list") && Catch::Contains("[sandbox.network] allow"));
  REQUIRE(find_event(unlisted, "other.test"));
  CHECK(find_event(unlisted, "other.test")->decision == "not_allowed");

  // A wildcard does not admit its bare name.
  auto bare = curl("corp.test");
  CHECK_THAT(bare.out.data, Catch::EndsWith("\n403"));
  CHECK(app.hits() == 0);
}

TEST_CASE("a name that resolves to loopback or metadata is refused unless its range is named", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kCurl)) { WARN("skipped: needs " << kCurl); return; }
  stub_server app("should not be reached\n");
  auto port = port_of(app);
  test_runtime rt(egress_profile("allow = [\"loop.test:" + port + "\", \"meta.test:80\"]\n",
                                 {{"loop.test", {"127.0.0.1"}}, {"meta.test", {"169.254.169.254"}}}),
                  false);
  auto loop = run_ok(rt, program({kCurl, "-sS", "-m", "10", "-w", "\\n%{http_code}", "http://loop.test:" + port + "/"}));
  CHECK_THAT(loop.out.data, Catch::EndsWith("\n403"));
  CHECK_THAT(loop.out.data, Catch::Contains("loopback address") && Catch::Contains("127.0.0.1/32:" + port));
  REQUIRE(find_event(loop, "loop.test"));
  CHECK(find_event(loop, "loop.test")->decision == "address_refused");
  auto meta = run_ok(rt, program({kCurl, "-sS", "-m", "10", "-w", "\\n%{http_code}", "http://meta.test/latest/meta-data/"}));
  CHECK_THAT(meta.out.data, Catch::EndsWith("\n403"));
  CHECK_THAT(meta.out.data, Catch::Contains("link-local address"));
  CHECK(app.hits() == 0);
}

TEST_CASE("a tunnel whose ClientHello names another host is cut", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kPython)) { WARN("skipped: needs " << kPython); return; }
  stub_server app("not TLS\n");
  auto port = port_of(app);
  test_runtime rt(egress_profile("allow = [\"app.test:" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                                 {{"app.test", {"127.0.0.1"}}}),
                  false);
  // CONNECT through the proxy, then a TLS handshake asking for `sni`; prints what happened.
  auto tls_through_proxy = [&](const std::string& sni) {
    std::string code =
        "import socket, ssl\n"
        "s = socket.create_connection(('127.0.0.1', 3128), timeout=10)\n"
        "s.sendall(b'CONNECT app.test:" + port + " HTTP/1.1\\r\\nHost: app.test\\r\\n\\r\\n')\n"
        "print(s.recv(1024).split(b'\\r\\n')[0].decode())\n"
        "ctx = ssl.create_default_context()\n"
        "try:\n"
        "    ctx.wrap_socket(s, server_hostname='" + sni + "')\n"
        "    print('handshake done')\n"
        "except Exception as e:\n"
        "    print('handshake failed', type(e).__name__)\n";
    return run_ok(rt, program({kPython, "-c", code}));
  };
  auto bad = tls_through_proxy("evil.test");
  CHECK_THAT(bad.out.data, Catch::StartsWith("HTTP/1.1 200"));
  CHECK_THAT(bad.out.data, Catch::Contains("handshake failed"));
  auto* e = find_event(bad, "app.test");
  REQUIRE(e);
  CHECK(e->decision == "sni_mismatch");
  CHECK_THAT(e->failure, Catch::Contains("evil.test"));
  CHECK(e->bytes_up == 0);  // the ClientHello never left the proxy
  for (auto& got : app.received()) CHECK(got.empty());

  // The right name passes: the stub sees the ClientHello (and fails the handshake itself).
  auto good = tls_through_proxy("app.test");
  CHECK_THAT(good.out.data, Catch::Contains("handshake failed"));
  auto* g = find_event(good, "app.test");
  REQUIRE(g);
  CHECK(g->decision == "allowed");
  bool hello_seen = false;
  for (auto& got : app.received()) hello_seen = hello_seen || (!got.empty() && static_cast<unsigned char>(got[0]) == 0x16);
  CHECK(hello_seen);
}

TEST_CASE("a tunnel whose program sends nothing and shuts its side still gets the destination's answer",
          "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kPython)) { WARN("skipped: needs " << kPython); return; }
  stub_server app("spoken first\n");  // answers once the peer's side ends, then closes
  auto port = port_of(app);
  test_runtime rt(egress_profile("allow = [\"app.test:" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                                 {{"app.test", {"127.0.0.1"}}}),
                  false);
  // Held for a ClientHello that never comes: the half-close must pass on, not end it.
  std::string code =
      "import socket\n"
      "s = socket.create_connection(('127.0.0.1', 3128), timeout=10)\n"
      "s.sendall(b'CONNECT app.test:" + port + " HTTP/1.1\\r\\nHost: app.test\\r\\n\\r\\n')\n"
      "got = b''\n"
      "while b'\\r\\n\\r\\n' not in got: got += s.recv(4096)\n"
      "head, rest = got.split(b'\\r\\n\\r\\n', 1)\n"
      "print(head.split(b'\\r\\n')[0].decode())\n"
      "s.shutdown(socket.SHUT_WR)\n"
      "while True:\n"
      "    b = s.recv(4096)\n"
      "    if not b: break\n"
      "    rest += b\n"
      "print(rest.decode().split('\\r\\n\\r\\n')[-1], end='')\n";
  auto r = run_ok(rt, program({kPython, "-c", code}));
  INFO(r.out.data << r.err.data);
  CHECK(r.exit_code == 0);
  CHECK(r.out.data == "HTTP/1.1 200 Connection established\nspoken first\n");
  auto* e = find_event(r, "app.test");
  REQUIRE(e);
  CHECK(e->decision == "allowed");
  CHECK(e->bytes_up == 0);
  CHECK(e->bytes_down > 0);
  CHECK(app.hits() == 1);
}
