// The start-up cgroup detection seen by a user who may not write the hierarchies: the
// doctor and the landlock tier must say what is missing and the two ways out, not that
// nothing is mounted. Run in a child that drops to uid 65534 (the test itself is root).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <grp.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/profile.hpp"
#include "tests/as_nobody.hpp"
#include "tests/runtime_fixture.hpp"
#include "tiers/cgroups/cgroup_delegation.hpp"
#include "tiers/cgroups/cgroup_detect.hpp"
#include "tiers/cgroups/cgroup_mounts.hpp"
#include "tiers/default_tiers.hpp"
#include "tiers/kernel_features.hpp"

using namespace corral;
using corral::testing::as_nobody;

namespace {

struct seen {
  int version = -1;
  std::string error, landlock;
};

// The detection and the landlock tier's verdict as uid 65534 sees them.
seen detect_as_nobody() {
  auto got = as_nobody([] {
    auto f = detect_kernel_features();
    profile p;
    auto reason = build_default_tiers(p, f)->find("landlock")->available().reason;
    return std::to_string(f.cgroup_version) + "\n" + f.cgroup_error + "\n" + reason;
  });
  seen s;
  auto a = got.find('\n'), b = got.find('\n', a + 1);
  REQUIRE(b != std::string::npos);
  s.version = std::stoi(got.substr(0, a));
  s.error = got.substr(a + 1, b - a - 1);
  s.landlock = got.substr(b + 1);
  return s;
}

bool v1_only() {
  bool v1 = false, v2_with_controllers = false;
  for (auto& m : read_cgroup_mounts()) {
    v1 = v1 || (!m.v2 && !m.controllers.empty());
    v2_with_controllers = v2_with_controllers || (m.v2 && m.point == "/sys/fs/cgroup");
  }
  return v1 && !v2_with_controllers;
}

} // namespace

TEST_CASE("a user who may not write the v1 hierarchies is told which and the two ways out", "[cgroup]") {
  if (::geteuid() != 0) { WARN("skipped: needs root to drop to another uid"); return; }
  if (!v1_only()) { WARN("skipped: this machine has cgroup v2, where the user's case is delegation"); return; }
  auto root = detect_kernel_features();
  REQUIRE(root.cgroup_version == 1);  // the detection finds the hierarchies root may write
  auto s = detect_as_nobody();
  CHECK(s.version == 0);
  CHECK_THAT(s.error, Catch::Contains("mounted but not writable by uid 65534"));
  CHECK_THAT(s.error, Catch::Contains("/sys/fs/cgroup/memory"));
  CHECK_THAT(s.landlock, Catch::Contains("corral serve --allow-uid 65534"));
  CHECK_THAT(s.landlock, Catch::Contains("Delegate=yes"));
}

namespace {

// A fake cgroup2 tree in a temp dir: `root` as the mount, `dir` below it owned by uid
// 65534 as a delegated subtree is (its dir, cgroup.procs and cgroup.subtree_control).
struct fake_v2_tree {
  corral::testing::temp_dir tmp{"corral-fake-cgroup-"};
  std::string root = tmp / "cg";

  fake_v2_tree() {
    REQUIRE(::chmod(tmp.path().c_str(), 0755) == 0);
    make(root, "cpuset cpu io memory pids", false);
  }
  void make(const std::string& dir, const std::string& controllers, bool owned_by_nobody) {
    std::filesystem::create_directories(dir);
    write(dir + "/cgroup.controllers", controllers + "\n");
    for (const char* f : {"cgroup.procs", "cgroup.subtree_control"}) {
      write(dir + "/" + f, "");
      if (owned_by_nobody) REQUIRE(::chown((dir + "/" + f).c_str(), 65534, 65534) == 0);
    }
    if (owned_by_nobody) REQUIRE(::chown(dir.c_str(), 65534, 65534) == 0);
  }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  std::vector<cgroup_mount> mounts() const { return {cgroup_mount{root, true, {}, "/"}}; }
};

// version, root, delegated, controllers and error of a detection, one per line.
std::string detected(const std::vector<cgroup_mount>& mounts, const std::string& self_cgroup) {
  kernel_features f;
  detect_cgroups(f, mounts, self_cgroup);
  std::string controllers;
  for (auto& c : f.cgroup_controllers) controllers += (controllers.empty() ? "" : " ") + c;
  return std::to_string(f.cgroup_version) + "\n" + f.cgroup_root + "\n" + (f.cgroup_delegated ? "delegated" : "-") +
         "\n" + controllers + "\n" + f.cgroup_error;
}

} // namespace

TEST_CASE("a user finds the cgroup v2 subtree delegated to it, and is told when its own is not", "[cgroup]") {
  if (::geteuid() != 0) { WARN("skipped: needs root to make files another uid owns"); return; }
  fake_v2_tree t;
  t.make(t.root + "/user.slice/corral.scope", "memory pids", true);
  t.make(t.root + "/user.slice/shell.scope", "memory pids cpu", false);
  t.make(t.root + "/user.slice/bare.scope", "io", true);
  auto mounts = t.mounts();

  // Root may write the mount's root: executions go there, as before.
  CHECK(detected(mounts, "0::/user.slice/corral.scope\n") == "2\n" + t.root + "\n-\nmemory pids cpu\n");

  // The user: its own cgroup, delegated, with what the parent enabled for it.
  CHECK(as_nobody([&] { return detected(mounts, "0::/user.slice/corral.scope\n"); }) ==
        "2\n" + t.root + "/user.slice/corral.scope\ndelegated\nmemory pids\n");
  // A cgroup it may not write: none usable, naming the mount and its own cgroup.
  auto refused = as_nobody([&] { return detected(mounts, "0::/user.slice/shell.scope\n"); });
  CHECK_THAT(refused, Catch::StartsWith("0\n\n-\n\n"));
  CHECK_THAT(refused, Catch::Contains("cgroup v2 at " + t.root + " is not writable by uid 65534"));
  CHECK_THAT(refused, Catch::Contains("(" + t.root + "/user.slice/shell.scope) is not delegated to it"));
  // Delegated without a controller corral uses.
  auto bare = as_nobody([&] { return detected(mounts, "0::/user.slice/bare.scope\n"); });
  CHECK_THAT(bare, Catch::StartsWith("0\n"));
  CHECK_THAT(bare, Catch::Contains("offers none of memory, pids and cpu"));
  CHECK_THAT(bare, Catch::Contains("Delegate=memory pids cpu"));
  // The mount's root itself is never taken as delegated.
  auto at_root = as_nobody([&] { return detected(mounts, "0::/\n"); });
  CHECK_THAT(at_root, Catch::StartsWith("0\n"));
  // A second runtime in the same process runs in the leaf the first made (owned by the
  // user, as corral made it): the leaf's parent is still the cgroup to use.
  t.make(t.root + "/user.slice/corral.scope/" + kRuntimeLeaf, "", true);
  CHECK(as_nobody([&] { return detected(mounts, "0::/user.slice/corral.scope/corral-runtime\n"); }) ==
        "2\n" + t.root + "/user.slice/corral.scope\ndelegated\nmemory pids\n");
}

TEST_CASE("root in a container's cgroup namespace runs in the cgroup it uses, so it moves into a leaf", "[cgroup]") {
  if (::geteuid() != 0) { WARN("skipped: needs root"); return; }
  fake_v2_tree t;
  auto mounts = t.mounts();
  // The hierarchy's real root (no cgroup.type): corral uses it and stays where it is.
  CHECK(detected(mounts, "0::/\n") == "2\n" + t.root + "\n-\nmemory pids cpu\n");
  // A namespace root is a cgroup like any other (it has cgroup.type): corral runs in it.
  fake_v2_tree::write(t.root + "/cgroup.type", "domain\n");
  CHECK(detected(mounts, "0::/\n") == "2\n" + t.root + "\ndelegated\nmemory pids cpu\n");
  CHECK(detected(mounts, "0::/" + std::string(kRuntimeLeaf) + "\n") == "2\n" + t.root + "\ndelegated\nmemory pids cpu\n");
  // Elsewhere in the hierarchy: not the cgroup corral runs in.
  CHECK(detected(mounts, "0::/user.slice\n") == "2\n" + t.root + "\n-\nmemory pids cpu\n");
}

TEST_CASE("corral moves itself into its leaf of the delegated cgroup, and never moves another process", "[cgroup]") {
  fake_v2_tree t;
  std::string dir = t.root + "/corral.scope";
  t.make(dir, "memory pids cpu", false);
  // A fake tree has no kernel to make the leaf's files: the leaf is made ahead.
  t.make(dir + "/" + kRuntimeLeaf, "memory pids cpu", false);
  pid_t self = ::getpid();

  SECTION("alone in it: moved") {
    fake_v2_tree::write(dir + "/cgroup.procs", std::to_string(self) + "\n");
    REQUIRE(enter_runtime_leaf(dir, self));
    CHECK(corral::testing::read_text(dir + "/" + kRuntimeLeaf + "/cgroup.procs") == std::to_string(self));
  }
  SECTION("moved already (a second runtime in this process): nothing written") {
    REQUIRE(enter_runtime_leaf(dir, self));
    CHECK(corral::testing::read_text(dir + "/" + kRuntimeLeaf + "/cgroup.procs").empty());
  }
  SECTION("beside a shell: refused, naming it and the way out") {
    fake_v2_tree::write(dir + "/cgroup.procs", "4242\n" + std::to_string(self) + "\n");
    auto moved = enter_runtime_leaf(dir, self);
    REQUIRE(!moved);
    CHECK(moved.error().kind == failure_kind::tier_unavailable);
    CHECK_THAT(moved.error().message, Catch::Contains("pid 4242"));
    CHECK_THAT(moved.error().message, Catch::Contains("systemd-run --user --scope -p Delegate=yes"));
    CHECK(corral::testing::read_text(dir + "/" + kRuntimeLeaf + "/cgroup.procs").empty());
  }
}
