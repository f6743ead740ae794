// External tiers: bounded preflights, honest reasons, and never a fallback.
#include <csignal>
#include <fstream>
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "runtime_fixture.hpp"
#include "tiers/default_tiers.hpp"
#include "tiers/external/external_tiers.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

std::string fake_runtime(const temp_dir& dir, const std::string& name, const std::string& body) {
  auto path = dir / name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

long read_pid(const std::string& path) {
  long pid = 0;
  std::ifstream(path) >> pid;
  return pid;
}

} // namespace

TEST_CASE("a hung runtime binary is reported unavailable within the preflight deadline", "[preflight]") {
  temp_dir dir;
  auto pidfile = dir / "pid";
  gvisor_settings s;
  s.runsc = fake_runtime(dir, "runsc", "echo $$ > " + pidfile + "; exec sleep 60");
  auto tier = make_gvisor_tier(s, 500ms);
  auto start = std::chrono::steady_clock::now();
  auto st = tier->available();
  auto took = std::chrono::steady_clock::now() - start;
  CHECK_FALSE(st.available);
  CHECK(st.reason.find("did not answer within 500 ms") != std::string::npos);
  CHECK(took < 10s);  // the fake sleeps 60 s: this is the bound working, not a benchmark
  long pid = read_pid(pidfile);
  REQUIRE(pid > 0);                       // the probe really ran
  CHECK(::kill(static_cast<pid_t>(pid), 0) != 0);  // and was killed, not left behind
  // The result is cached: asking again does not wait again.
  auto again = std::chrono::steady_clock::now();
  CHECK_FALSE(tier->available().available);
  CHECK(std::chrono::steady_clock::now() - again < 400ms);
}

TEST_CASE("external tier preflights say what is missing", "[preflight]") {
  temp_dir dir;
  SECTION("a missing binary") {
    gvisor_settings s;
    s.runsc = dir / "no-such-runsc";
    auto st = make_gvisor_tier(s, 1s)->available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("not found") != std::string::npos);
  }
  SECTION("an engine CLI whose engine is not running") {
    container_settings s;
    s.engine = fake_runtime(dir, "docker", "echo 'Cannot connect to the Docker daemon' >&2; exit 1");
    s.image = "debian:12";
    auto st = make_container_tier(s, 2s)->available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("Cannot connect to the Docker daemon") != std::string::npos);
  }
  SECTION("a runtime that answers --version but cannot start a sandbox") {
    // The fake exits 0 to everything: only the trial sandbox's missing output gives it away.
    gvisor_settings s;
    s.runsc = fake_runtime(dir, "runsc", "echo 'runsc version fake'");
    auto tier = make_gvisor_tier(s, 2s);
    auto st = tier->available();
    CHECK_FALSE(st.available);
    if (::geteuid() == 0) CHECK(st.reason.find("trial sandbox") != std::string::npos);
    auto plan = tier->plan(launch_request{}, lease_grant{});
    REQUIRE_FALSE(plan);
    CHECK(plan.error().kind == failure_kind::tier_unavailable);
  }
}

TEST_CASE("an unavailable tier is an error and nothing falls back to host", "[preflight][policy]") {
  temp_dir dir;
  auto marker = dir / "ran";
  // Unavailable here by construction: no e2b service, no microvm image, no container
  // image configured, a runsc that does not exist.
  for (const char* name : {"e2b", "gvisor", "container", "microvm", "tier1", "tier2", "tier3"}) {
    profile p;
    p.tier = name;
    p.gvisor.runsc = dir / "no-such-runsc";
    test_runtime t(p, true);  // even with the host opt-in
    auto r = t.run(shell("touch " + marker));
    INFO(name);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == failure_kind::tier_unavailable);
    CHECK_FALSE(std::ifstream(marker).good());
  }
  auto tiers = build_default_tiers(profile{}, detect_kernel_features());
  auto e2b = tiers->select("e2b", selection_policy{true, false});
  REQUIRE_FALSE(e2b);
  CHECK(e2b.error().message.find("e2b") != std::string::npos);
}
