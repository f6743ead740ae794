// `corral serve` forked as the tests' daemon: in `dir`, on `socket`, its state and its
// workspaces under `dir` (removed with it; a restart in the same dir finds them). The
// daemon fixtures (daemon_process.hpp, served_daemon.hpp) differ in how they wait for it
// and stop it, not in how it starts.
#pragma once

#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "tests/runtime_fixture.hpp"

namespace corral::testing {

enum class host_opt_in { inherit, cleared };  // CORRAL_ALLOW_HOST from the test's environment

// The child's pid (or -1); the child never returns.
inline pid_t fork_corral_serve(const temp_dir& dir, const std::string& socket, const std::vector<std::string>& extra,
                               host_opt_in host) {
  std::vector<std::string> args{CORRAL_TEST_CLI, "serve", "--socket", socket, "--state-dir", dir / "state"};
  args.insert(args.end(), extra.begin(), extra.end());
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (::chdir(dir.path().c_str()) < 0) ::_exit(127);
  if (host == host_opt_in::cleared) ::unsetenv("CORRAL_ALLOW_HOST");
  ::setenv("CORRAL_WORKSPACES_DIR", (dir / "workspaces").c_str(), 1);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

} // namespace corral::testing
