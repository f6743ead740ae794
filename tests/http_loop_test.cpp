// proto/http/http_loop with real sockets on 127.0.0.1: each connection's actor forwards
// what it hears to the test's scoped actor, the test answers through write()/close(), and
// a plain POSIX client checks the bytes on the wire. Every wait is bounded.
#include <arpa/inet.h>
#include <chrono>
#include <future>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "proto/http/http_events.hpp"
#include "proto/http/http_loop.hpp"

using namespace corral;
using namespace std::chrono_literals;

namespace {

// What a connection's actor heard, tagged with its connection.
struct heard {
  enum class kind { request, written, closed, nothing } what = kind::nothing;
  std::uint64_t connection = 0;
  http_request request;
  std::uint64_t bytes = 0;
  std::string reason;
};

caf::behavior forwarder(caf::event_based_actor* self, std::uint64_t id, caf::actor sink) {
  return {
      [=](http_request& r) { self->send(sink, id, std::move(r)); },
      [=](http_written w) { self->send(sink, id, w); },
      [=](http_closed& c) {
        self->send(sink, id, std::move(c));
        self->quit();
      },
  };
}

// A blocking client whose every read waits at most `bound`.
struct test_client {
  int fd = -1;
  std::string buffered;

  explicit test_client(std::uint16_t port) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  ~test_client() { hang_up(); }
  void hang_up() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  void send(std::string_view bytes) {
    while (!bytes.empty()) {
      auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      REQUIRE(n > 0);
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  // Reads until `done(buffered)` holds or the peer closes or `bound` passes; whether it held.
  template <class F>
  bool read_until(F done, std::chrono::milliseconds bound = 5s) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (!done(buffered)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[16384];
      auto n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return done(buffered);
      buffered.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }

  // Whether the server closed the connection within `bound` (EOF or reset).
  bool sees_close(std::chrono::milliseconds bound = 5s) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      auto n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return true;
      buffered.append(buf, static_cast<std::size_t>(n));
    }
    return false;
  }

  // One Content-Length response off the front of what was read: {status line, body}.
  std::optional<std::pair<std::string, std::string>> response() {
    std::size_t head_end = 0, length = 0;
    bool whole = read_until([&](const std::string& b) {
      head_end = b.find("\r\n\r\n");
      if (head_end == std::string::npos) return false;
      auto cl = b.find("Content-Length: ");
      length = cl < head_end ? std::stoul(b.substr(cl + 16)) : 0;
      return b.size() >= head_end + 4 + length;
    });
    if (!whole) return std::nullopt;
    std::pair<std::string, std::string> r{buffered.substr(0, buffered.find("\r\n")), buffered.substr(head_end + 4, length)};
    buffered.erase(0, head_end + 4 + length);
    return r;
  }
};

struct http_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> self;
  std::unique_ptr<http_loop> loop;

  http_fixture() {
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    self = std::make_unique<caf::scoped_actor>(*sys);
  }
  ~http_fixture() {
    loop.reset();
    self.reset();
    sys.reset();
  }

  void serve(http_limits limits = {}) {
    auto sink = caf::actor_cast<caf::actor>(*self);
    auto* system = sys.get();
    loop = std::make_unique<http_loop>(limits, [system, sink](std::uint64_t id, const std::string& peer) {
      CHECK(peer.rfind("127.0.0.1:", 0) == 0);
      return system->spawn(forwarder, id, sink);
    });
    auto listening = loop->listen("127.0.0.1", 0);
    REQUIRE(listening);
    REQUIRE(loop->port() != 0);
    loop->start();
  }

  heard next(std::chrono::milliseconds bound = 5s) {
    heard h;
    (*self)->receive(
        [&](std::uint64_t id, http_request& r) {
          h = {heard::kind::request, id, std::move(r), 0, {}};
        },
        [&](std::uint64_t id, http_written w) { h = {heard::kind::written, id, {}, w.bytes, {}}; },
        [&](std::uint64_t id, http_closed& c) { h = {heard::kind::closed, id, {}, 0, std::move(c.reason)}; },
        caf::after(bound) >> [] {});
    return h;
  }

  // The next event of `what`, skipping write acknowledgements (counted into `acked`).
  heard next_of(heard::kind what, std::uint64_t* acked = nullptr) {
    for (int i = 0; i < 1000; ++i) {
      auto h = next();
      if (h.what == heard::kind::written && what != heard::kind::written) {
        if (acked) *acked += h.bytes;
        continue;
      }
      return h;
    }
    return {};
  }

  void answer(const http_request& r, std::string body) {
    loop->write(r.connection, serialize(http_response{200, {{"Content-Type", "text/plain"}}, std::move(body)}));
  }
};

} // namespace

TEST_CASE("http_loop serves two keep-alive requests on one connection and acknowledges writes", "[http]") {
  http_fixture f;
  f.serve();
  test_client c(f.loop->port());
  c.send("GET /one?x=1 HTTP/1.1\r\nHost: t\r\n\r\n");
  auto first = f.next_of(heard::kind::request);
  REQUIRE(first.what == heard::kind::request);
  CHECK(first.request.path == "/one");
  CHECK(first.request.query_param("x") == std::optional<std::string>("1"));
  auto bytes = serialize(http_response{200, {}, "first"});
  f.loop->write(first.connection, bytes);
  auto ack = f.next();
  REQUIRE(ack.what == heard::kind::written);
  CHECK(ack.bytes == bytes.size());
  auto r1 = c.response();
  REQUIRE(r1);
  CHECK(r1->first == "HTTP/1.1 200 OK");
  CHECK(r1->second == "first");

  c.send("POST /two HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nbody");
  auto second = f.next_of(heard::kind::request);
  REQUIRE(second.what == heard::kind::request);
  CHECK(second.connection == first.connection);
  CHECK(second.request.body == "body");
  f.answer(second.request, "second");
  auto r2 = c.response();
  REQUIRE(r2);
  CHECK(r2->second == "second");
}

TEST_CASE("http_loop delivers pipelined requests in order", "[http]") {
  http_fixture f;
  f.serve();
  test_client c(f.loop->port());
  c.send("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\nPOST /c HTTP/1.1\r\nContent-Length: 1\r\n\r\nz");
  std::vector<std::string> paths;
  for (int i = 0; i < 3; ++i) {
    auto h = f.next_of(heard::kind::request);
    REQUIRE(h.what == heard::kind::request);
    paths.push_back(h.request.path);
    f.answer(h.request, h.request.path);
  }
  CHECK(paths == std::vector<std::string>{"/a", "/b", "/c"});
  for (const char* expected : {"/a", "/b", "/c"}) {
    auto r = c.response();
    REQUIRE(r);
    CHECK(r->second == expected);
  }
}

TEST_CASE("http_loop decodes a chunked request body and answers 100 Continue", "[http]") {
  http_fixture f;
  f.serve();
  test_client c(f.loop->port());
  c.send("PUT /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n");
  REQUIRE(c.read_until([](const std::string& b) { return b.find("\r\n\r\n") != std::string::npos; }));
  CHECK(c.buffered == "HTTP/1.1 100 Continue\r\n\r\n");
  c.buffered.clear();
  c.send("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
  auto h = f.next_of(heard::kind::request);
  REQUIRE(h.what == heard::kind::request);
  CHECK(h.request.method == "PUT");
  CHECK(h.request.body == "hello world");
}

TEST_CASE("http_loop refuses an oversized body with 413 and closes", "[http]") {
  http_fixture f;
  http_limits limits;
  limits.max_body_bytes = 100;
  f.serve(limits);
  test_client c(f.loop->port());
  c.send("POST / HTTP/1.1\r\nContent-Length: 1000\r\n\r\n");
  auto r = c.response();
  REQUIRE(r);
  CHECK(r->first == "HTTP/1.1 413 Content Too Large");
  CHECK(c.sees_close());
  c.hang_up();  // ends the server's linger at once
  auto closed = f.next_of(heard::kind::closed);
  REQUIRE(closed.what == heard::kind::closed);
  CHECK(closed.reason.find("413") != std::string::npos);
}

TEST_CASE("http_loop refuses an oversized head with 431 and closes", "[http]") {
  http_fixture f;
  http_limits limits;
  limits.max_head_bytes = 1024;
  f.serve(limits);
  test_client c(f.loop->port());
  c.send("GET / HTTP/1.1\r\nX-Big: " + std::string(4096, 'a') + "\r\n\r\n");
  auto r = c.response();
  REQUIRE(r);
  CHECK(r->first == "HTTP/1.1 431 Request Header Fields Too Large");
  CHECK(c.sees_close());
}

TEST_CASE("http_loop refuses a malformed request with 400 and closes", "[http]") {
  http_fixture f;
  f.serve();
  test_client c(f.loop->port());
  c.send("NOT HTTP AT ALL\r\n\r\n");
  auto r = c.response();
  REQUIRE(r);
  CHECK(r->first == "HTTP/1.1 400 Bad Request");
  CHECK(c.sees_close());
  c.hang_up();
  auto closed = f.next_of(heard::kind::closed);
  REQUIRE(closed.what == heard::kind::closed);
  CHECK(closed.reason.find("400") != std::string::npos);
}

TEST_CASE("http_loop streams a chunked response whose writes are acknowledged", "[http]") {
  http_fixture f;
  f.serve();
  test_client c(f.loop->port());
  c.send("GET /stream HTTP/1.1\r\n\r\n");
  auto h = f.next_of(heard::kind::request);
  REQUIRE(h.what == heard::kind::request);
  std::uint64_t sent = 0, acked = 0;
  auto put = [&](std::string bytes) {
    sent += bytes.size();
    f.loop->write(h.connection, std::move(bytes));
  };
  put(stream_head(200, {{"Content-Type", "application/connect+json"}}));
  for (int i = 0; i < 50; ++i) put(chunk(std::string(1000, static_cast<char>('a' + i % 26))));
  put(last_chunk());
  REQUIRE(c.read_until([](const std::string& b) { return b.size() >= 5 && b.compare(b.size() - 5, 5, "0\r\n\r\n") == 0; }));
  CHECK(c.buffered.find("Transfer-Encoding: chunked") != std::string::npos);
  CHECK(c.buffered.find("3e8\r\n" + std::string(1000, 'a') + "\r\n") != std::string::npos);
  for (int i = 0; i < 100 && acked < sent; ++i) {
    auto w = f.next();
    REQUIRE(w.what == heard::kind::written);
    acked += w.bytes;
  }
  CHECK(acked == sent);
  f.loop->close(h.connection);
  CHECK(c.sees_close());
  c.hang_up();
  auto closed = f.next_of(heard::kind::closed);
  REQUIRE(closed.what == heard::kind::closed);
}

TEST_CASE("http_loop tells the actor when the client disconnects mid-stream", "[http]") {
  http_fixture f;
  f.serve();
  test_client c(f.loop->port());
  c.send("GET /stream HTTP/1.1\r\n\r\n");
  auto h = f.next_of(heard::kind::request);
  REQUIRE(h.what == heard::kind::request);
  f.loop->write(h.connection, stream_head(200, {}));
  f.loop->write(h.connection, chunk("partial"));
  REQUIRE(c.read_until([](const std::string& b) { return b.find("partial") != std::string::npos; }));
  c.hang_up();
  // The actor keeps producing until it hears the close, as a streaming actor would.
  heard closed;
  for (int i = 0; i < 100 && closed.what != heard::kind::closed; ++i) {
    f.loop->write(h.connection, chunk("more"));
    closed = f.next(100ms);
  }
  REQUIRE(closed.what == heard::kind::closed);
  CHECK(closed.connection == h.connection);
}

TEST_CASE("http_loop closes after a Connection close request when the actor asks", "[http]") {
  http_fixture f;
  f.serve();
  test_client c(f.loop->port());
  c.send("GET /last HTTP/1.1\r\nConnection: close\r\n\r\n");
  auto h = f.next_of(heard::kind::request);
  REQUIRE(h.what == heard::kind::request);
  CHECK_FALSE(h.request.keep_alive);
  f.answer(h.request, "bye");
  f.loop->close(h.connection);
  auto r = c.response();
  REQUIRE(r);
  CHECK(r->second == "bye");
  CHECK(c.sees_close());
}

TEST_CASE("http_loop closes a connection that sends no complete head in time", "[http]") {
  http_fixture f;
  http_limits limits;
  limits.head_timeout = 200ms;
  f.serve(limits);
  test_client c(f.loop->port());
  c.send("GET / HT");
  CHECK(c.sees_close(3s));
  auto closed = f.next_of(heard::kind::closed);
  REQUIRE(closed.what == heard::kind::closed);
  CHECK(closed.reason.find("no complete request head") != std::string::npos);
}

TEST_CASE("http_loop closes connections over max_connections at once", "[http]") {
  http_fixture f;
  http_limits limits;
  limits.max_connections = 1;
  f.serve(limits);
  test_client first(f.loop->port());
  first.send("GET / HTTP/1.1\r\n\r\n");
  REQUIRE(f.next_of(heard::kind::request).what == heard::kind::request);
  test_client second(f.loop->port());
  CHECK(second.sees_close());
  CHECK(second.buffered.empty());
}

TEST_CASE("http_loop stop closes open connections and every actor hears it", "[http]") {
  http_fixture f;
  f.serve();
  test_client a(f.loop->port()), b(f.loop->port());
  a.send("GET /a HTTP/1.1\r\n\r\n");
  b.send("GET /b HTTP/1.1\r\n\r\n");
  REQUIRE(f.next_of(heard::kind::request).what == heard::kind::request);
  REQUIRE(f.next_of(heard::kind::request).what == heard::kind::request);
  auto stopping = std::async(std::launch::async, [&] { f.loop->stop(); });
  if (stopping.wait_for(10s) != std::future_status::ready) {
    FAIL_CHECK("http_loop::stop did not return within 10 s");
    std::_Exit(1);  // a hung join cannot be abandoned any other way
  }
  f.loop->stop();  // idempotent
  for (int i = 0; i < 2; ++i) {
    auto closed = f.next_of(heard::kind::closed);
    REQUIRE(closed.what == heard::kind::closed);
    CHECK(closed.reason == "the server is stopping");
  }
  CHECK(a.sees_close());
  CHECK(b.sees_close());
}

TEST_CASE("http_loop listens on IPv6 loopback and refuses a name it cannot parse", "[http]") {
  http_loop refused({}, [](std::uint64_t, const std::string&) { return caf::actor{}; });
  auto bad = refused.listen("not-an-address", 0);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("not a numeric") != std::string::npos);
  http_loop six({}, [](std::uint64_t, const std::string&) { return caf::actor{}; });
  auto listening = six.listen("::1", 0);
  if (!listening) {
    WARN("no IPv6 loopback here: " << listening.error().message);
    return;
  }
  six.start();
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_port = htons(six.port());
  addr.sin6_addr = in6addr_loopback;
  CHECK(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  // No actor for it (the accept_fn returns none): closed at once.
  pollfd p{fd, POLLIN, 0};
  CHECK(::poll(&p, 1, 5000) == 1);
  char byte;
  CHECK(::recv(fd, &byte, 1, 0) <= 0);
  ::close(fd);
}

TEST_CASE("http_loop drops a client that stops reading past max_pending_output", "[http]") {
  http_fixture f;
  http_limits limits;
  limits.max_pending_output = 1 << 20;
  f.serve(limits);
  test_client c(f.loop->port());
  c.send("GET /flood HTTP/1.1\r\n\r\n");
  auto h = f.next_of(heard::kind::request);
  REQUIRE(h.what == heard::kind::request);
  f.loop->write(h.connection, stream_head(200, {}));
  // The kernel's buffers take a few MiB of what the client never reads; the rest queues.
  for (int i = 0; i < 16; ++i) f.loop->write(h.connection, chunk(std::string(2 << 20, 'x')));
  auto closed = f.next_of(heard::kind::closed);
  REQUIRE(closed.what == heard::kind::closed);
  CHECK(closed.reason.find("did not read") != std::string::npos);
}
