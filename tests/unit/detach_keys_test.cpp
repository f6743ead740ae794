// ctrl-p ctrl-q leaves a workspace's terminal (proto/cli/detach_keys.hpp): every other key,
// a lone ctrl-p included, reaches the terminal unchanged and in order.
#include <catch2/catch.hpp>

#include "proto/cli/detach_keys.hpp"

using corral::cli::detach_keys;

TEST_CASE("detach keys: keys pass through and a ctrl-p is held until the next key decides", "[unit][cli]") {
  detach_keys keys;
  bool detach = false;
  CHECK(keys.pass("ls\r", detach) == "ls\r");
  CHECK(keys.pass("a\x10", detach) == "a");  // held: it may begin the sequence
  CHECK(keys.pass("p", detach) == "\x10p");  // it did not: it goes on, before the key
  CHECK(keys.pass("\x10\x10", detach) == "\x10");
  CHECK(!detach);
  CHECK(keys.pass("\x11typed after", detach).empty());
  CHECK(detach);
}

TEST_CASE("detach keys: the sequence split across reads still detaches", "[unit][cli]") {
  detach_keys keys;
  bool detach = false;
  CHECK(keys.pass("echo hi\x10", detach) == "echo hi");
  CHECK(!detach);
  CHECK(keys.pass("\x11", detach).empty());
  CHECK(detach);
}
