// Checks the runtime makes at start-up, before anything runs.
#include <catch2/catch.hpp>

#include "runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;

TEST_CASE("a root that exposes the runtime's state dir is refused at start-up", "[runtime][protected]") {
  temp_dir state;
  auto state_dir = state / "state";
  profile p;
  p.tier = "landlock";
  // The state dir's parent as a writable root would let a jail rewrite lease records.
  p.output_roots.push_back({state.path(), "/out", true});
  runtime_options o;
  o.prof = p;
  o.exec_helper = CORRAL_TEST_HELPER;
  o.state_dir = state_dir;
  auto rt = runtime::start(std::move(o));
  REQUIRE_FALSE(rt);
  CHECK(rt.error().kind == failure_kind::config_error);
  CHECK(rt.error().message.find(state_dir) != std::string::npos);
}
