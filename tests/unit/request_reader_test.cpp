// proto/http/request_reader: http-parser behind http_loop's limits, without a socket.
#include <catch2/catch.hpp>

#include "proto/http/request_reader.hpp"

using namespace corral;

TEST_CASE("request_reader splits pipelined requests and decodes the target", "[unit][http]") {
  request_reader r(7, 1024, 1024);
  auto out = r.feed("GET /files/a%20b?path=x&y=1 HTTP/1.1\r\nHost: h\r\nX-Mixed-Case: V\r\n\r\n"
                    "POST /p HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
  REQUIRE(out.requests.size() == 2);
  auto& get = out.requests[0];
  CHECK(get.connection == 7);
  CHECK(get.method == "GET");
  CHECK(get.path == "/files/a b");
  CHECK(get.query == "path=x&y=1");
  CHECK(get.raw_target == "/files/a%20b?path=x&y=1");
  REQUIRE(get.header("x-mixed-case"));
  CHECK(*get.header("x-mixed-case") == "V");
  CHECK(get.keep_alive);
  CHECK(out.requests[1].body == "abc");
  CHECK_FALSE(out.refused);
  CHECK_FALSE(r.awaiting_head());
}

TEST_CASE("request_reader assembles a request fed a byte at a time", "[unit][http]") {
  request_reader r(1, 1024, 1024);
  std::string bytes = "PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
  std::vector<http_request> got;
  for (char c : bytes)
    for (auto& req : r.feed(std::string_view(&c, 1)).requests) got.push_back(std::move(req));
  REQUIRE(got.size() == 1);
  CHECK(got[0].body == "abcde");
}

TEST_CASE("request_reader refuses a head over the limit with 431", "[unit][http]") {
  request_reader r(1, 100, 1024);
  auto out = r.feed("GET / HTTP/1.1\r\nX: " + std::string(200, 'a') + "\r\n\r\n");
  REQUIRE(out.refused);
  CHECK(out.refused->status == 431);
  CHECK(r.finished());
  CHECK(r.feed("GET / HTTP/1.1\r\n\r\n").requests.empty());
}

TEST_CASE("request_reader refuses a body over the limit with 413, by Content-Length or as chunks come", "[unit][http]") {
  request_reader by_length(1, 1024, 10);
  auto out = by_length.feed("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n");
  REQUIRE(out.refused);
  CHECK(out.refused->status == 413);
  request_reader chunked(1, 1024, 10);
  auto first = chunked.feed("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n");
  CHECK_FALSE(first.refused);
  auto second = chunked.feed("8\r\n12345678\r\n");
  REQUIRE(second.refused);
  CHECK(second.refused->status == 413);
}

TEST_CASE("request_reader refuses malformed requests with 400", "[unit][http]") {
  request_reader garbage(1, 1024, 1024);
  auto out = garbage.feed("\x01\x02 nonsense\r\n\r\n");
  REQUIRE(out.refused);
  CHECK(out.refused->status == 400);
  request_reader nul(1, 1024, 1024);
  auto bad_path = nul.feed("GET /a%00b HTTP/1.1\r\n\r\n");
  REQUIRE(bad_path.refused);
  CHECK(bad_path.refused->status == 400);
  request_reader connect(1, 1024, 1024);
  auto authority = connect.feed("CONNECT example.com:443 HTTP/1.1\r\n\r\n");
  REQUIRE(authority.refused);
  CHECK(authority.refused->status == 400);
}

TEST_CASE("request_reader asks for 100 Continue only while the body is still to come", "[unit][http]") {
  request_reader waits(1, 1024, 1024);
  auto head = waits.feed("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  CHECK(head.continue_expected);
  auto body = waits.feed("ok");
  CHECK_FALSE(body.continue_expected);
  REQUIRE(body.requests.size() == 1);
  request_reader whole(1, 1024, 1024);
  CHECK_FALSE(whole.feed("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok").continue_expected);
}

TEST_CASE("request_reader reads nothing after a Connection close request", "[unit][http]") {
  request_reader r(1, 1024, 1024);
  auto out = r.feed("GET /a HTTP/1.1\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\n\r\n");
  REQUIRE(out.requests.size() == 1);
  CHECK_FALSE(out.requests[0].keep_alive);
  CHECK(r.finished());
  CHECK_FALSE(out.refused);
  request_reader old(1, 1024, 1024);
  auto ten = old.feed("GET / HTTP/1.0\r\n\r\n");
  REQUIRE(ten.requests.size() == 1);
  CHECK_FALSE(ten.requests[0].keep_alive);
}

TEST_CASE("request_reader declines an Upgrade and reads on as HTTP/1.1", "[unit][http]") {
  request_reader r(1, 1024, 1024);
  auto out = r.feed("GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\nGET /next HTTP/1.1\r\n\r\n");
  REQUIRE(out.requests.size() == 2);
  CHECK(out.requests[1].path == "/next");
}

TEST_CASE("request_reader times the head from the start and from a later request's first byte", "[unit][http]") {
  request_reader r(1, 1024, 1024);
  CHECK(r.awaiting_head());
  r.feed("GET / HTTP/1.1\r\n");
  CHECK(r.awaiting_head());
  r.feed("\r\n");
  CHECK_FALSE(r.awaiting_head());  // idle between requests: not timed
  r.feed("G");
  CHECK(r.awaiting_head());
}
