// proto/http/http_message: responses as bytes, percent-decoding, query parameters.
#include <catch2/catch.hpp>

#include "proto/http/http_message.hpp"

using namespace corral;

TEST_CASE("serialize writes the status line, headers, Content-Length and body", "[unit][http]") {
  http_response r{201, {{"Content-Type", "application/json"}}, "{}"};
  CHECK(serialize(r) == "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
}

TEST_CASE("serialize keeps a caller's Content-Length and sends none for 204", "[unit][http]") {
  http_response head{200, {{"content-length", "10"}}, ""};
  CHECK(serialize(head) == "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n");
  http_response none{204, {}, "ignored"};
  CHECK(serialize(none) == "HTTP/1.1 204 No Content\r\n\r\n");
}

TEST_CASE("serialize turns CR and LF in a header into spaces", "[unit][http]") {
  http_response r{200, {{"X-A", "v\r\nSet-Cookie: evil"}}, ""};
  auto bytes = serialize(r);
  CHECK(bytes.find("X-A: v  Set-Cookie: evil\r\n") != std::string::npos);
  CHECK(bytes.find("\r\nSet-Cookie") == std::string::npos);
}

TEST_CASE("stream_head and chunks frame a chunked response", "[unit][http]") {
  CHECK(stream_head(200, {{"Content-Type", "application/connect+json"}}) ==
        "HTTP/1.1 200 OK\r\nContent-Type: application/connect+json\r\nTransfer-Encoding: chunked\r\n\r\n");
  CHECK(chunk("hello") == "5\r\nhello\r\n");
  CHECK(chunk(std::string(26, 'x')).substr(0, 4) == "1a\r\n");
  CHECK(chunk("").empty());  // would end the body
  CHECK(last_chunk() == "0\r\n\r\n");
}

TEST_CASE("percent_decode decodes escapes and refuses bad ones and NUL", "[unit][http]") {
  CHECK(percent_decode("/a%20b%2Fc") == std::optional<std::string>("/a b/c"));
  CHECK(percent_decode("a+b") == std::optional<std::string>("a+b"));
  CHECK(percent_decode("a+b", true) == std::optional<std::string>("a b"));
  CHECK_FALSE(percent_decode("%"));
  CHECK_FALSE(percent_decode("%4"));
  CHECK_FALSE(percent_decode("%zz"));
  CHECK_FALSE(percent_decode("a%00b"));
}

TEST_CASE("query_param finds, decodes and misses parameters", "[unit][http]") {
  http_request r;
  r.query = "path=%2Fhome%2Fuser+x&flag&user=root&path=second";
  CHECK(r.query_param("path") == std::optional<std::string>("/home/user x"));
  CHECK(r.query_param("flag") == std::optional<std::string>(""));
  CHECK(r.query_param("user") == std::optional<std::string>("root"));
  CHECK_FALSE(r.query_param("missing"));
  r.headers = {{"content-type", "text/plain"}};
  REQUIRE(r.header("content-type"));
  CHECK(*r.header("content-type") == "text/plain");
  CHECK(r.header("accept") == nullptr);
}

TEST_CASE("reason_phrase names common codes and falls back by class", "[unit][http]") {
  CHECK(std::string(reason_phrase(404)) == "Not Found");
  CHECK(std::string(reason_phrase(431)) == "Request Header Fields Too Large");
  CHECK(std::string(reason_phrase(299)) == "OK");
  CHECK(std::string(reason_phrase(599)) == "Server Error");
}
