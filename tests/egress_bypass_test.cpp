// Trying to get around the egress proxy from inside the jail, and trying to break it:
// each attempt must run (its marker is printed) and fail, the stub on the host must see
// nothing of it, and the proxy must keep serving afterwards.
#include <catch2/catch.hpp>

#include "tests/egress_fixture.hpp"

using namespace corral;
using namespace corral::testing;


TEST_CASE("bypassing the proxy reaches nothing: --noproxy, a direct IP, UDP to port 53, DNS", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kCurl) || !have(kPython)) { WARN("skipped: needs " << kCurl << " and " << kPython); return; }
  stub_server app("reached\n");
  auto port = std::to_string(app.port());
  test_runtime rt(egress_profile("allow = [\"app.test:" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                                 {{"app.test", {"127.0.0.1"}}}),
                  false);
  std::string script =
      "echo attempt-noproxy-name; " + std::string(kCurl) + " -sS -m 5 --noproxy '*' http://app.test:" + port +
      "/ && echo REACHED; "
      "echo attempt-noproxy-ip; " + kCurl + " -sS -m 5 --noproxy '*' http://127.0.0.1:" + port + "/ && echo REACHED; "
      "echo attempt-direct-public; " + kCurl + " -sS -m 5 --noproxy '*' http://192.0.2.1:" + port + "/ && echo REACHED; "
      "echo attempt-udp; " + kPython + " -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
      "s.sendto(b'x', ('8.8.8.8', 53)); print('REACHED')\"; "
      "echo attempt-dns; " + kPython + " -c \"import socket; print(socket.gethostbyname('app.test')); print('REACHED')\"; "
      "echo done";
  auto r = run_ok(rt, shell(script));
  INFO(r.out.data << r.err.data);
  for (const char* marker : {"attempt-noproxy-name", "attempt-noproxy-ip", "attempt-direct-public", "attempt-udp",
                             "attempt-dns", "done"})
    CHECK_THAT(r.out.data, Catch::Contains(marker));
  CHECK_THAT(r.out.data, !Catch::Contains("REACHED"));
  CHECK(app.hits() == 0);
  // Nothing went through the proxy either: no audit events.
  REQUIRE(r.network);
  CHECK(r.network->events.empty());
}

TEST_CASE("64 concurrent connections go through one execution's proxy", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kPython)) { WARN("skipped: needs " << kPython); return; }
  stub_server app("ok\n");
  auto port = std::to_string(app.port());
  test_runtime rt(egress_profile("allow = [\"app.test:" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                                 {{"app.test", {"127.0.0.1"}}}),
                  false);
  std::string code =
      "import urllib.request, concurrent.futures as f\n"
      "def get(i):\n"
      "    return urllib.request.urlopen('http://app.test:" + port + "/%d' % i, timeout=20).read()\n"
      "with f.ThreadPoolExecutor(64) as ex:\n"
      "    print(sum(1 for b in ex.map(get, range(64)) if b == b'ok\\n'))\n";
  auto r = run_ok(rt, program({kPython, "-c", code}));
  INFO(r.err.data);
  CHECK(r.out.data == "64\n");
  REQUIRE(r.network);
  CHECK(r.network->events.size() == 64);
  CHECK(app.hits() == 64);
}

TEST_CASE("malformed proxy input is answered and closed while the proxy keeps serving", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kPython) || !have(kCurl)) { WARN("skipped: needs " << kCurl << " and " << kPython); return; }
  stub_server app("still serving\n");
  auto port = std::to_string(app.port());
  test_runtime rt(egress_profile("allow = [\"app.test:" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                                 {{"app.test", {"127.0.0.1"}}}),
                  false);
  std::string code =
      "import socket\n"
      "def attempt(name, port, data):\n"
      "    s = socket.create_connection(('127.0.0.1', port), timeout=20)\n"
      "    try:\n"
      "        s.sendall(data)\n"
      "    except OSError as e:\n"
      "        pass\n"
      "    got = b''\n"
      "    try:\n"
      "        while True:\n"
      "            b = s.recv(65536)\n"
      "            if not b: break\n"
      "            got += b\n"
      "    except OSError as e:\n"
      "        got += b'<' + type(e).__name__.encode() + b'>'\n"
      "    print(name, got[:40])\n"
      "attempt('huge', 3128, b'GET http://app.test/ HTTP/1.1\\r\\nX: ' + b'a' * (1 << 20))\n"
      "attempt('garbage', 3128, bytes(range(256)) * 4)\n"
      "attempt('socks-garbage', 1080, b'\\x04\\x01\\x00\\x50garbage')\n"
      "attempt('socks-bind', 1080, b'\\x05\\x01\\x00' + b'\\x05\\x02\\x00\\x01\\x7f\\x00\\x00\\x01\\x00\\x50')\n"
      "attempt('nothing', 3128, b'')\n";
  auto r = run_ok(rt, program({kPython, "-c", code}));
  INFO(r.out.data << r.err.data);
  CHECK_THAT(r.out.data, Catch::Contains("huge b'HTTP/1.1 431"));
  CHECK_THAT(r.out.data, Catch::Contains("garbage b'HTTP/1.1 400"));
  CHECK_THAT(r.out.data, Catch::Contains("socks-garbage b''"));
  // Method accepted (05 00), then "command not supported" (05 07) for BIND.
  CHECK_THAT(r.out.data, Catch::Contains("socks-bind b'\\x05\\x00\\x05\\x07"));
  CHECK_THAT(r.out.data, Catch::Contains("nothing b''"));
  CHECK(app.hits() == 0);
  // The same runtime serves the next execution.
  auto next = run_ok(rt, program({kCurl, "-sS", "-m", "10", "http://app.test:" + port + "/"}));
  CHECK(next.out.data == "still serving\n");
}

TEST_CASE("connections still open when the execution ends are closed, and nothing is left", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kPython)) { WARN("skipped: needs " << kPython); return; }
  stub_server held("", true);
  auto port = std::to_string(held.port());
  test_runtime rt(egress_profile("allow = [\"app.test:" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                                 {{"app.test", {"127.0.0.1"}}}),
                  false);
  // A background child keeps a tunnel open after the program itself has exited; the jail's
  // end kills it, and the proxy's side must close too.
  std::string code =
      "import socket, os, time\n"
      "if os.fork() == 0:\n"
      "    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)\n"
      "    s.sendall(b'CONNECT app.test:" + port + " HTTP/1.1\\r\\n\\r\\n')\n"
      "    s.recv(100)\n"
      "    s.sendall(b'ping')\n"
      "    time.sleep(60)\n"
      "    os._exit(0)\n"
      "time.sleep(1.5)\n"
      "print('parent done')\n";
  auto r = run_ok(rt, program({kPython, "-c", code}));
  CHECK(r.out.data == "parent done\n");
  CHECK(held.hits() == 1);
  CHECK(eventually([&] { return held.closed() == 1; }));
  CHECK(tracked_after_settling(*rt.rt) == 0);
  auto* e = find_event(r, "app.test");
  REQUIRE(e);
  CHECK(e->decision == "allowed");
  CHECK(e->bytes_up == 4);
}
