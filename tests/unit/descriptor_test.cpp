// The descriptor's digest: stable for the same profile, different whenever an enforced
// value differs. Kernel features and tiers are fixed fakes so the test does not depend
// on the machine.
#include <filesystem>
#include <functional>
#include <set>

#include <catch2/catch.hpp>

#include "config/toml/toml_profile.hpp"
#include "config/version.hpp"
#include "proto/describe/descriptor.hpp"
#include "tests/runtime_fixture.hpp"

using namespace corral;
using corral::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

// Allowlist mode with one allow entry.
void allow_only(profile& p, const std::string& entry) {
  p.network = network_mode::allowlist;
  p.egress.allow = {*parse_network_rule(entry, rule_list::allow)};
}


class fake_tier : public tier {
public:
  fake_tier(std::string name, bool available) : name_(std::move(name)), available_(available) {}
  std::string name() const override { return name_; }
  tier_status available() const override { return {available_, available_ ? "" : "not installed (fake)"}; }
  tier_capabilities capabilities() const override {
    tier_capabilities c;
    c.timeout = c.memory = c.pids = true;
    c.network_isolation = name_ != "host";
    return c;
  }
  expected<launch_plan> plan(const launch_request&, const lease_grant&) const override {
    return make_failure(failure_kind::internal, "fake tier: no plans");
  }

private:
  std::string name_;
  bool available_;
};

kernel_features fixed_features() {
  kernel_features f;
  f.kernel_release = "6.1.0-test";
  f.landlock_abi = 4;
  f.seccomp = true;
  f.user_namespaces = true;
  f.pidfd = true;
  f.cgroup_version = 2;
  f.cgroup_root = "/sys/fs/cgroup/corral";
  f.cgroup_controllers = {"memory", "pids", "cpu"};
  return f;
}

tier_registry fixed_tiers() {
  tier_registry r;
  r.add(std::make_shared<fake_tier>("landlock", true));
  r.add(std::make_shared<fake_tier>("host", true));
  r.add(std::make_shared<fake_tier>("gvisor", false));
  return r;
}

std::string digest_of(const profile& p) {
  return profile_descriptor(p, fixed_features(), fixed_tiers())["digest"].get<std::string>();
}

} // namespace

TEST_CASE("the digest has the documented form and covers the canonical dump", "[descriptor]") {
  profile p;
  auto j = profile_descriptor(p, fixed_features(), fixed_tiers());
  auto digest = j["digest"].get<std::string>();
  // "sha256:" and 64 lowercase hex digits (std::regex trips GCC 12's -Wmaybe-uninitialized
  // under the sanitizers, inside libstdc++).
  CHECK(digest.rfind("sha256:", 0) == 0);
  CHECK(digest.size() == 7 + 64);
  CHECK(digest.find_first_not_of("0123456789abcdef", 7) == std::string::npos);
  auto body = j;
  body.erase("digest");
  body.erase("config_path");
  body.erase("corral_version");  // outside the digest too: a profile keeps its digest across versions
  CHECK(descriptor_digest(body) == digest);
  CHECK(j["corral_version"] == std::string(corral_version()));
  // A known SHA-256 vector, so the hex encoding itself is checked.
  CHECK(descriptor_digest(nlohmann::json::object()) ==
        "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");

  CHECK(j["tier"] == "landlock");
  CHECK(j["network"] == "none");
  CHECK(j["limits"]["memory_bytes"] == default_memory_bytes());
  CHECK(j["limits"]["pids"] == 512);
  CHECK(j["limits"]["tmp_bytes"] == 256 * kMiB);
  CHECK(j["limits"]["shm_bytes"] == 64 * kMiB);
  CHECK(j["limits"]["scratch_bytes"] == 512 * kMiB);
  CHECK(j["limits"]["timeout_ms"] == 30'000);
  CHECK(j["kernel"]["landlock_abi"] == 4);
  CHECK(j["selected_tier"]["available"] == true);
  CHECK(j["selected_tier"]["enforces"]["memory"] == true);
}

TEST_CASE("the same profile always has the same digest", "[descriptor]") {
  temp_dir project;
  fs::create_directories(project / "src");
  const std::string text =
      "[sandbox]\nenv = { B = \"2\", A = \"1\" }\n[sandbox.roots]\nsource_roots = [\"src:/src\"]\n"
      "[sandbox.limits]\nmemory = \"512m\"\ncpu = 0.5\n";
  auto a = load_profile_from_string(text, "a.toml", project.path());
  auto b = load_profile_from_string(text, "b.toml", project.path());
  REQUIRE(a);
  REQUIRE(b);
  profile copy = *a;
  CHECK(digest_of(*a) == digest_of(*a));
  CHECK(digest_of(*a) == digest_of(*b));
  CHECK(digest_of(*a) == digest_of(copy));
  copy.config_path = "/elsewhere/corral.toml";  // provenance, not policy
  CHECK(digest_of(*a) == digest_of(copy));
}

TEST_CASE("changing any enforced value changes the digest", "[descriptor]") {
  temp_dir project;
  fs::create_directories(project / "src");
  fs::create_directories(project / "other");
  profile base;
  base.limit.memory_bytes = 512 * kMiB;
  base.limit.pids = 64;
  base.limit.cpu_cores = 1.0;
  base.source_roots.push_back({fs::canonical(project / "src").string(), "/src", false});

  std::vector<std::pair<std::string, std::function<void(profile&)>>> changes = {
      {"memory", [](profile& p) { p.limit.memory_bytes = 256 * kMiB; }},
      {"memory unset", [](profile& p) { p.limit.memory_bytes.reset(); }},
      {"pids", [](profile& p) { p.limit.pids = 65; }},
      {"cpu", [](profile& p) { p.limit.cpu_cores = 1.5; }},
      {"timeout", [](profile& p) { p.limit.timeout = std::chrono::milliseconds(29'999); }},
      {"kill grace", [](profile& p) { p.limit.kill_grace = std::chrono::milliseconds(500); }},
      {"output cap", [](profile& p) { p.limit.output_cap += 1; }},
      {"stdin cap", [](profile& p) { p.limit.stdin_cap -= 1; }},
      {"tier", [](profile& p) { p.tier = "gvisor"; }},
      {"tier to host", [](profile& p) { p.tier = "host"; }},
      {"root host", [&](profile& p) { p.source_roots[0].host_path = fs::canonical(project / "other").string(); }},
      {"root virtual", [](profile& p) { p.source_roots[0].virtual_path = "/src2"; }},
      {"root writable", [](profile& p) { p.output_roots.push_back(p.source_roots[0]); p.output_roots[0].writable = true; p.source_roots.clear(); }},
      {"network", [](profile& p) { p.network = network_mode::host; }},
      {"network allowlist", [](profile& p) { allow_only(p, "pypi.org"); }},
      {"network allow entry", [](profile& p) { allow_only(p, "pypi.org:443"); }},
      {"network deny entry", [](profile& p) {
         allow_only(p, "pypi.org");
         p.egress.deny = {*parse_network_rule("files.pypi.org", rule_list::deny)};
       }},
      {"on_widen", [](profile& p) { p.on_widen = widen_policy::clamp; }},
      {"protected path", [](profile& p) { p.protected_paths.push_back("/secrets"); }},
      {"landlock floor", [](profile& p) { p.landlock.abi_floor = 2; }},
      {"deny action", [](profile& p) { p.landlock.seccomp_kill = true; }},
      {"env", [](profile& p) { p.env["X"] = "1"; }},
      {"language", [](profile& p) { p.languages.define({"zig", "main.zig", {}, {"zig", "run", "{src}"}, {}, ""}); }},
  };
  std::set<std::string> seen{digest_of(base)};
  for (auto& [what, change] : changes) {
    INFO(what);
    profile changed = base;
    change(changed);
    auto d = digest_of(changed);
    CHECK(d != digest_of(base));
    CHECK(seen.insert(d).second);  // and different from every other change
  }

  // The selected tier's own settings count; another tier's do not.
  profile gv = base;
  gv.tier = "gvisor";
  profile gv_platform = gv;
  gv_platform.gvisor.platform = "kvm";
  CHECK(digest_of(gv) != digest_of(gv_platform));
  profile ll_platform = base;
  ll_platform.gvisor.platform = "kvm";
  CHECK(digest_of(base) == digest_of(ll_platform));
}

TEST_CASE("the kernel features and the selected tier's state are part of the digest", "[descriptor]") {
  profile p;
  auto features = fixed_features();
  auto d = profile_descriptor(p, features, fixed_tiers())["digest"];
  features.landlock_abi = 3;
  CHECK(profile_descriptor(p, features, fixed_tiers())["digest"] != d);

  p.tier = "microvm";  // not in the registry: reported, not thrown
  auto j = profile_descriptor(p, fixed_features(), fixed_tiers());
  CHECK(j["selected_tier"]["available"] == false);
  CHECK(j["selected_tier"]["enforces"].is_null());
  p.tier = "gvisor";
  j = profile_descriptor(p, fixed_features(), fixed_tiers());
  CHECK(j["selected_tier"]["available"] == false);
  CHECK(j["selected_tier"]["reason"] == "not installed (fake)");
}
