// config/line_splitter: the one bounded line cutter behind JSON-RPC connections and the
// stdio sessions' newline framing.
#include <catch2/catch.hpp>

#include <string>

#include "actors/message_framing.hpp"
#include "config/line_splitter.hpp"

using namespace corral;

TEST_CASE("line_splitter keeps or strips a carriage return as asked", "[unit][lines]") {
  line_splitter keep(100, line_splitter::carriage_return::keep);
  auto k = keep.feed("a\r\nb\n");
  REQUIRE(k.size() == 2);
  CHECK(k[0].line == "a\r");
  CHECK(k[1].line == "b");
  line_splitter strip(100, line_splitter::carriage_return::strip);
  auto s = strip.feed("a\r\nb\n");
  REQUIRE(s.size() == 2);
  CHECK(s[0].line == "a");
  CHECK(s[1].line == "b");
}

TEST_CASE("line_splitter reports an oversized line once with what it had seen", "[unit][lines]") {
  line_splitter lines(5, line_splitter::carriage_return::keep);
  auto whole = lines.feed("1234567\nok\n");  // the newline came with it: the exact size
  REQUIRE(whole.size() == 2);
  CHECK(whole[0].oversized);
  CHECK(whole[0].size == 7);
  CHECK(whole[1].line == "ok");
  auto first = lines.feed("abcd");
  CHECK(first.empty());
  CHECK(lines.buffered() == 4);
  auto over = lines.feed("efgh");  // no newline yet: refused now, at 8 bytes seen
  REQUIRE(over.size() == 1);
  CHECK(over[0].oversized);
  CHECK(over[0].size == 8);
  CHECK(lines.buffered() == 0);
  CHECK(lines.feed("more of the same line").empty());  // skipped, not reported again
  auto after = lines.feed("\nnext\n");
  REQUIRE(after.size() == 1);
  CHECK(after[0].line == "next");
}

TEST_CASE("newline framing passes its lines through the shared splitter", "[unit][lines]") {
  frame_decoder d(framing_mode::newline, 5);
  std::vector<decoded_frame> out;
  d.feed("hi\r\n1234567\nok", out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].message == "hi\r");  // framing keeps the bytes as they came
  REQUIRE(out[1].error.has_value());
  CHECK(out[1].error->message.find("7 bytes") != std::string::npos);
  CHECK(d.buffered() == 2);
}
