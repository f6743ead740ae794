// `corral serve` as a separate process on a socket in its own temp dir, for the tests of
// the CLI's --connect clients: SIGTERM then a bounded reap when it goes out of scope.
#pragma once

#include <chrono>
#include <csignal>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/runtime_fixture.hpp"
#include "tests/serve_child.hpp"

namespace corral::testing {

struct served_daemon {
  temp_dir dir{"corral-served-"};
  std::string socket = dir / "corral.sock";
  std::vector<std::string> extra;
  pid_t pid = -1;

  explicit served_daemon(std::vector<std::string> extra_args = {"--allow-host"}) : extra(std::move(extra_args)) { start(); }
  ~served_daemon() { stop(SIGTERM); }
  served_daemon(const served_daemon&) = delete;
  served_daemon& operator=(const served_daemon&) = delete;

  // Also after a kill: the same state dir, so the start sweeps what the killed one left.
  void start() {
    ::unlink(socket.c_str());  // a stale one would count as ready below
    pid = fork_corral_serve(dir, socket, extra, host_opt_in::inherit);
    REQUIRE(pid >= 0);
    REQUIRE(eventually([&] { return ::access(socket.c_str(), F_OK) == 0; }, std::chrono::seconds(20)));
  }

  // The signal, then a reap bounded at 20 s (SIGKILL after that).
  void stop(int sig) {
    if (pid <= 0) return;
    ::kill(pid, sig);
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (::waitpid(pid, &status, WNOHANG) != pid) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid = -1;
  }
};

} // namespace corral::testing
