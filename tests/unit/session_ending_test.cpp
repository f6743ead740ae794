// The two rules sessions end by (actors/sessions/session_ending.hpp), without a session.
#include <catch2/catch.hpp>

#include "actors/sessions/session_ending.hpp"

using namespace corral;

TEST_CASE("a terminal keeps the first reason it was given", "[session_ending]") {
  session_ending e(end_rule::first_wins);
  CHECK_FALSE(e.decided());
  CHECK(e.reason() == session_end_reason::exited);
  e.offer(session_end_reason::cancelled, "", false);
  e.offer(session_end_reason::failed, "the helper failed", false);
  e.offer(session_end_reason::exited, "", true);
  CHECK(e.reason() == session_end_reason::cancelled);
  CHECK(e.detail().empty());
}

TEST_CASE("a stdio session lets a failed start outrank a close while the exit is unknown", "[session_ending]") {
  session_ending e(end_rule::failed_start_outranks);
  e.offer(session_end_reason::closed, "", false);
  e.offer(session_end_reason::failed, "the lease did not finish", false);
  CHECK(e.reason() == session_end_reason::failed);
  CHECK(e.detail() == "the lease did not finish");
  // The first failure stands.
  e.offer(session_end_reason::failed, "a later failure", false);
  CHECK(e.detail() == "the lease did not finish");
}

TEST_CASE("a stdio session keeps its reason once the child's exit is known", "[session_ending]") {
  session_ending e(end_rule::failed_start_outranks);
  e.offer(session_end_reason::lifetime, "", false);
  e.offer(session_end_reason::failed, "too late", true);
  CHECK(e.reason() == session_end_reason::lifetime);
  e.offer(session_end_reason::idle, "", false);
  CHECK(e.reason() == session_end_reason::lifetime);
}
