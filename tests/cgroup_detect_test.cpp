// The start-up cgroup detection seen by a user who may not write the hierarchies: the
// doctor and the landlock tier must say what is missing and the two ways out, not that
// nothing is mounted. Run in a child that drops to uid 65534 (the test itself is root).
#include <catch2/catch.hpp>

#include <grp.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/profile.hpp"
#include "tiers/cgroups/cgroup_mounts.hpp"
#include "tiers/default_tiers.hpp"
#include "tiers/kernel_features.hpp"

using namespace corral;

namespace {

struct seen {
  int version = -1;
  std::string error, landlock;
};

// Forks, drops to uid/gid 65534, detects; the answer comes back over a pipe (20 s bound).
seen detect_as_nobody() {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
      ::_exit(2);
    auto f = detect_kernel_features();
    profile p;
    auto reason = build_default_tiers(p, f)->find("landlock")->available().reason;
    std::string out = std::to_string(f.cgroup_version) + "\n" + f.cgroup_error + "\n" + reason;
    (void)!::write(fds[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string got;
  char buf[4096];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, 20000) <= 0) break;
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  ::kill(pid, SIGKILL);  // a no-op when it finished
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
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
