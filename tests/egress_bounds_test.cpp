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
