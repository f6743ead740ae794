// The egress proxy's bounds, end to end on the landlock tier: one execution cannot hold
// more than egress_limits::max_connections (256) connections open at once; the one past
// the cap is answered 503 naming the cap, and the execution keeps working once it closes
// some. The stub holds every connection open until the program closes it.
#include <catch2/catch.hpp>

#include "tests/egress_fixture.hpp"

using namespace corral;
using namespace corral::testing;

TEST_CASE("connections past the per-execution cap get a 503 and the execution keeps working", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kPython)) { WARN("skipped: needs " << kPython); return; }
  stub_server app("", true);
  auto port = std::to_string(app.port());
  test_runtime rt(egress_profile("allow = [\"app.test:" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                                 {{"app.test", {"127.0.0.1"}}}),
                  false);
  // Opens 256 tunnels and keeps them, then a 257th; then closes ten and opens one more.
  // Prints the count of tunnels answered 200, the status line of the extra one and its
  // body, and the status line after the ten closed. Every socket has a 20 s bound.
  std::string code =
      "import socket\n"
      "def tunnel():\n"
      "    s = socket.create_connection(('127.0.0.1', 3128), timeout=20)\n"
      "    s.sendall(b'CONNECT app.test:" + port + " HTTP/1.1\\r\\nHost: app.test\\r\\n\\r\\n')\n"
      "    got = b''\n"
      "    while b'\\r\\n\\r\\n' not in got:\n"
      "        more = s.recv(4096)\n"
      "        if not more: break\n"
      "        got += more\n"
      "    return s, got\n"
      "held, ok = [], 0\n"
      "for _ in range(256):\n"
      "    s, got = tunnel()\n"
      "    held.append(s)\n"
      "    ok += got.startswith(b'HTTP/1.1 200')\n"
      "print(ok)\n"
      "s, got = tunnel()\n"
      "head, _, body = got.partition(b'\\r\\n\\r\\n')\n"
      "try:\n"
      "    while True:\n"
      "        more = s.recv(4096)\n"
      "        if not more: break\n"
      "        body += more\n"
      "except OSError: pass\n"
      "print(head.split(b'\\r\\n')[0].decode())\n"
      "print(body.decode().strip())\n"
      "s.close()\n"
      "for s in held[:10]: s.close()\n"
      "import time\n"
      "for _ in range(100):\n"
      "    s, got = tunnel()\n"
      "    if got.startswith(b'HTTP/1.1 200'): break\n"
      "    s.close(); time.sleep(0.05)\n"
      "print(got.split(b'\\r\\n')[0].decode())\n";
  auto r = run_ok(rt, program({kPython, "-c", code}));
  INFO(r.out.data << r.err.data);
  CHECK(r.exit_code == 0);
  auto lines = std::vector<std::string>{};
  std::string line;
  for (char ch : r.out.data) {
    if (ch == '\n') lines.push_back(std::move(line)), line.clear();
    else line += ch;
  }
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "256");  // the cap's worth of tunnels all went through
  CHECK(lines[1] == "HTTP/1.1 503 Service Unavailable");
  CHECK_THAT(lines[2], Catch::Contains("connection cap (256)"));
  CHECK(lines[3] == "HTTP/1.1 200 Connection established");  // the execution kept working
  // From outside: the stub saw the held tunnels and the last one, never the refused one.
  CHECK(app.hits() == 257);
}

TEST_CASE("a silent tunnel is closed at the idle bound and a busy one is not", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kPython)) { WARN("skipped: needs " << kPython); return; }
  stub_server app("", true);
  auto port = std::to_string(app.port());
  auto prof = egress_profile("allow = [\"app.test:" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                             {{"app.test", {"127.0.0.1"}}});
  prof.egress.test_idle_timeout = std::chrono::milliseconds(1000);  // the relay's 120 s, shortened
  test_runtime rt(prof, false);
  // Three tunnels: one silent after a first byte and one silent from the start, whose
  // first bytes the proxy is still holding for a ClientHello (how long until the proxy
  // closes each: the idle bound, not the 10 s request-head bound); one that sends a byte
  // every 0.3 s for 2.5 s (still open after, more than twice the bound).
  std::string code =
      "import socket, time\n"
      "def tunnel(first=b'x'):\n"
      "    s = socket.create_connection(('127.0.0.1', 3128), timeout=15)\n"
      "    s.sendall(b'CONNECT app.test:" + port + " HTTP/1.1\\r\\nHost: app.test\\r\\n\\r\\n')\n"
      "    got = b''\n"
      "    while b'\\r\\n\\r\\n' not in got: got += s.recv(4096)\n"
      "    s.sendall(first)\n"  // 'x' is not a ClientHello: the tunnel relays from here on
      "    return s\n"
      "silent = tunnel()\n"
      "t = time.monotonic()\n"
      "eof = silent.recv(4096) == b''\n"
      "print('silent', eof, round(time.monotonic() - t, 1))\n"
      "held = tunnel(b'')\n"
      "t = time.monotonic()\n"
      "eof = held.recv(4096) == b''\n"
      "print('held', eof, round(time.monotonic() - t, 1))\n"
      "busy = tunnel()\n"
      "t = time.monotonic()\n"
      "while time.monotonic() - t < 2.5:\n"
      "    busy.sendall(b'x'); time.sleep(0.3)\n"
      "busy.settimeout(0.2)\n"
      "try:\n"
      "    print('busy', 'closed' if busy.recv(1) == b'' else 'data')\n"
      "except socket.timeout:\n"
      "    print('busy open')\n";
  auto r = run_ok(rt, program({kPython, "-c", code}));
  INFO(r.out.data << r.err.data);
  CHECK(r.exit_code == 0);
  double waited = -1;
  char eof[8] = {};
  REQUIRE(std::sscanf(r.out.data.c_str(), "silent %7s %lf", eof, &waited) == 2);
  CHECK(std::string(eof) == "True");  // the proxy closed the silent tunnel...
  CHECK(waited >= 0.9);               // ...not before the bound
  CHECK(waited < 10);                 // ...and long before the socket's own 15 s
  double held = -1;
  char held_eof[8] = {};
  auto at = r.out.data.find("held ");
  REQUIRE(at != std::string::npos);
  REQUIRE(std::sscanf(r.out.data.c_str() + at, "held %7s %lf", held_eof, &held) == 2);
  CHECK(std::string(held_eof) == "True");
  CHECK(held >= 0.9);
  CHECK(held < 5);  // the idle bound (1 s here), not the request head's 10 s
  CHECK_THAT(r.out.data, Catch::Contains("busy open"));
  REQUIRE(r.network);
  int idle = 0;
  for (auto& e : r.network->events) idle += e.failure == "idle timeout";
  CHECK(idle == 2);  // the busy tunnel ended with the execution, not at the bound
}
