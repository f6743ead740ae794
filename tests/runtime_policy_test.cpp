// Checks the runtime makes at start-up, before anything runs.
#include <future>
#include <thread>

#include <catch2/catch.hpp>

#include "tiers/default_tiers.hpp"

#include "runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;

TEST_CASE("a root that holds the runtime's state dir has it hidden, and one inside it is refused", "[runtime][protected]") {
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
  auto rt = runtime::start(o);
  REQUIRE(rt);
  auto& masks = (*rt)->frozen_profile().masks;
  REQUIRE(masks.size() == 1);
  CHECK(masks[0].virtual_path == "/out/state");
  CHECK(masks[0].kind == mask_kind::hidden);
  rt->reset();

  // Inside the state dir no mask can leave anything of the root visible.
  std::filesystem::create_directories(state_dir + "/scratch");
  o.prof.output_roots = {{state_dir + "/scratch", "/out", true}};
  auto refused = runtime::start(std::move(o));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == failure_kind::config_error);
  CHECK(refused.error().message.find(state_dir) != std::string::npos);
}

TEST_CASE("a runtime starting on a shared state dir leaves a live runtime's leases alone", "[runtime][lease]") {
  profile p;
  p.tier = "landlock";
  {
    profile probe;
    auto tiers = build_default_tiers(probe, detect_kernel_features());
    auto st = tiers->find("landlock")->available();
    if (!st.available) {
      WARN("skipped: the landlock tier is unavailable here: " << st.reason);
      return;
    }
  }
  temp_dir state;
  auto make = [&] {
    runtime_options o;
    o.prof = p;
    o.exec_helper = CORRAL_TEST_HELPER;
    o.state_dir = state / "state";
    auto rt = runtime::start(std::move(o));
    if (!rt) FAIL("runtime::start: " << rt.error().describe());
    return std::move(*rt);
  };
  auto first = make();
  std::promise<expected<exec_result>> done;
  auto result = done.get_future();
  exec_request r = shell("echo started; sleep 2; echo finished");
  r.timeout = std::chrono::seconds(20);
  first->exec_async(r, [&](expected<exec_result> res) { done.set_value(std::move(res)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // the lease is recorded by now
  auto second = make();  // sweeps at start-up
  REQUIRE(result.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  auto res = result.get();
  REQUIRE(res);
  CHECK(res->how == verdict::exited);
  CHECK(res->out.data == "started\nfinished\n");  // not killed by the second runtime's sweep
}
