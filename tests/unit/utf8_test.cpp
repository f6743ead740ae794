// config/utf8: the one UTF-8 decoder and tail scan the loader, the collectors and the
// daemon share.
#include <catch2/catch.hpp>

#include <string>

#include "config/utf8.hpp"

using namespace corral;

TEST_CASE("utf8_sequence_at accepts each length and returns the code point", "[unit][utf8]") {
  char32_t cp = 0;
  CHECK(utf8_sequence_at("A", 0, &cp) == 1);
  CHECK(cp == U'A');
  CHECK(utf8_sequence_at("\xC3\xA9", 0, &cp) == 2);
  CHECK(cp == U'\u00E9');
  CHECK(utf8_sequence_at("\xE2\x82\xAC", 0, &cp) == 3);
  CHECK(cp == U'\u20AC');
  CHECK(utf8_sequence_at("\xF0\x9F\x98\x80", 0, &cp) == 4);
  CHECK(cp == U'\U0001F600');
}

TEST_CASE("utf8_sequence_at refuses malformed sequences", "[unit][utf8]") {
  CHECK(utf8_sequence_at("\x80", 0) == 0);              // a stray continuation byte
  CHECK(utf8_sequence_at("\xC0\x80", 0) == 0);          // overlong NUL
  CHECK(utf8_sequence_at("\xE0\x80\xAF", 0) == 0);      // overlong '/'
  CHECK(utf8_sequence_at("\xED\xA0\x80", 0) == 0);      // a surrogate
  CHECK(utf8_sequence_at("\xF4\x90\x80\x80", 0) == 0);  // past U+10FFFF
  CHECK(utf8_sequence_at("\xF8\x88\x80\x80\x80", 0) == 0);
  CHECK(utf8_sequence_at("\xE2\x82", 0) == 0);          // cut short by the end
  CHECK(utf8_sequence_at("\xE2\x41\xAC", 0) == 0);      // cut short by an ASCII byte
}

TEST_CASE("to_valid_utf8 replaces each bad byte and keeps the rest", "[unit][utf8]") {
  CHECK(is_valid_utf8("plain \xC3\xA9 text"));
  CHECK_FALSE(is_valid_utf8("a\xFF" "b"));
  CHECK(to_valid_utf8("a\xFF" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(to_valid_utf8("\xE2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");
}

// The two copies this replaced differed in how far back they looked (3 bytes or 4). A
// character of n bytes cut after k < n of them leaves k <= 3 bytes waiting, and a lead found
// 4 back always has its bytes, so 3 is enough; these cases pin every cut of every length.
TEST_CASE("incomplete_utf8_tail holds back exactly the bytes of a cut character", "[unit][utf8]") {
  const std::string chars[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};
  for (const auto& ch : chars) {
    for (std::size_t k = 1; k < ch.size(); ++k) {
      std::string s = "ab" + ch.substr(0, k);
      INFO("a " << ch.size() << "-byte character cut after " << k);
      CHECK(incomplete_utf8_tail(s) == k);
    }
    CHECK(incomplete_utf8_tail("ab" + ch) == 0);
    CHECK(incomplete_utf8_tail(ch) == 0);
  }
  CHECK(incomplete_utf8_tail("") == 0);
  CHECK(incomplete_utf8_tail("abc") == 0);
  // Bytes that no further input can complete are not held (they are replaced later).
  CHECK(incomplete_utf8_tail("a\x80\x80\x80") == 0);
  CHECK(incomplete_utf8_tail("a\xFF") == 0);
}
