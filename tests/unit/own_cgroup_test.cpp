// Where the cgroup this process runs in lies on disk: /proc/self/cgroup's v2 line read
// against the cgroup2 mount's point and root (a delegated subtree is found this way).
#include <catch2/catch.hpp>

#include "tiers/cgroups/cgroup_delegation.hpp"
#include "tiers/cgroups/cgroup_mounts.hpp"

using namespace corral;

TEST_CASE("the own v2 cgroup is found below the mount that shows it", "[cgroup]") {
  cgroup_mount whole{"/sys/fs/cgroup", true, {}, "/"};
  const std::string hybrid = "12:memory:/x\n1:name=systemd:/user.slice\n0::/user.slice/user-1000.slice/corral.scope\n";
  CHECK(own_v2_cgroup(whole, hybrid) == "/sys/fs/cgroup/user.slice/user-1000.slice/corral.scope");
  CHECK(own_v2_cgroup(whole, "0::/\n") == "/sys/fs/cgroup");

  // A mount of a subtree (a container's view, or a bind mount): only cgroups below its root.
  cgroup_mount sub{"/mnt/cg", true, {}, "/user.slice"};
  CHECK(own_v2_cgroup(sub, "0::/user.slice/a.scope\n") == "/mnt/cg/a.scope");
  CHECK(own_v2_cgroup(sub, "0::/user.slice\n") == "/mnt/cg");
  CHECK(!own_v2_cgroup(sub, "0::/user.slicer/a.scope\n"));
  CHECK(!own_v2_cgroup(sub, "0::/system.slice/a.service\n"));

  // No v2 line, a v1 mount, a line that is not a path.
  CHECK(!own_v2_cgroup(whole, "4:memory:/a\n"));
  CHECK(!own_v2_cgroup(cgroup_mount{"/sys/fs/cgroup/memory", false, {"memory"}, "/"}, "0::/a\n"));
  CHECK(!own_v2_cgroup(whole, "0::\n"));
}

TEST_CASE("mountinfo's root field is kept for each cgroup mount", "[cgroup]") {
  auto mounts = parse_cgroup_mounts(
      "30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
      "41 30 0:26 /user.slice/a\\040b /mnt/cg rw - cgroup2 cgroup2 rw\n");
  REQUIRE(mounts.size() == 2);
  CHECK(mounts[0].root == "/");
  CHECK(mounts[1].root == "/user.slice/a b");
  CHECK(mounts[1].point == "/mnt/cg");
}
