// proto/http/connect_envelope: the Connect protocol's streaming frames.
#include <catch2/catch.hpp>

#include "proto/http/connect_envelope.hpp"

using namespace corral;

TEST_CASE("envelope frames a message and an end of stream", "[unit][http]") {
  CHECK(envelope("{}") == std::string("\x00\x00\x00\x00\x02{}", 7));
  CHECK(envelope("{}", true) == std::string("\x02\x00\x00\x00\x02{}", 7));
  auto big = envelope(std::string(0x010203, 'x'));
  CHECK(big.substr(0, 5) == std::string("\x00\x00\x01\x02\x03", 5));
}

TEST_CASE("decode_envelopes reads back what envelope wrote", "[unit][http]") {
  std::string body = envelope("{\"a\":1}") + envelope("") + envelope("{}", true);
  auto frames = decode_envelopes(body, 1024);
  REQUIRE(frames);
  REQUIRE(frames->size() == 3);
  CHECK((*frames)[0].payload == "{\"a\":1}");
  CHECK_FALSE((*frames)[0].end_stream());
  CHECK((*frames)[1].payload.empty());
  CHECK((*frames)[2].end_stream());
  auto none = decode_envelopes("", 1024);
  REQUIRE(none);
  CHECK(none->empty());
}

TEST_CASE("decode_envelopes refuses compressed, oversized and truncated frames", "[unit][http]") {
  auto compressed = decode_envelopes(std::string("\x01\x00\x00\x00\x01x", 6), 1024);
  REQUIRE_FALSE(compressed);
  CHECK(compressed.error().message.find("compressed") != std::string::npos);
  auto oversized = decode_envelopes(envelope(std::string(20, 'x')), 10);
  REQUIRE_FALSE(oversized);
  CHECK(oversized.error().kind == failure_kind::limit_exceeded);
  auto short_head = decode_envelopes(envelope("{}") + std::string("\x00\x00", 2), 1024);
  REQUIRE_FALSE(short_head);
  CHECK(short_head.error().message.find("envelope header at byte 7") != std::string::npos);
  auto short_body = decode_envelopes(envelope("{\"a\":1}").substr(0, 8), 1024);
  REQUIRE_FALSE(short_body);
  CHECK(short_body.error().message.find("ends inside a message") != std::string::npos);
  auto unknown = decode_envelopes(std::string("\x80\x00\x00\x00\x00", 5), 1024);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("0x80") != std::string::npos);
}
