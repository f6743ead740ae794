// Runs a piece of a test as uid/gid 65534 (nobody), in a forked child: what a user who is
// not root sees (cgroup detection, what it may execute). The test itself runs as root.
#pragma once

#include <csignal>
#include <functional>
#include <grp.h>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

namespace corral::testing {

// Forks, drops to uid/gid 65534, runs `fn` there; its answer comes back over a pipe (20 s
// bound).
inline std::string as_nobody(const std::function<std::string()>& fn) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0)
      ::_exit(2);
    std::string out = fn();
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
  return got;
}

} // namespace corral::testing
