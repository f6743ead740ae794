// corral: the program every command starts. It serves `corral run` through a daemon
// (--connect SOCKET, or CORRAL_CONNECT) itself and hands serve, e2b and run --nodes to
// corral-full, with no actor runtime loaded: CAF, toml++, libuv and spdlog, loaded and
// relocated, were most of a one-shot start (issue 17). Every other command, `run`
// in-process among them, runs in corral-local.so, opened here (local_commands.hpp).
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "proto/cli/commands.hpp"
#include "proto/cli/front/local_commands.hpp"
#include "proto/cli/invocation.hpp"
#include "proto/cli/run_options.hpp"
#include "proto/cli/run_via_daemon.hpp"

int main(int argc, char** argv) {
  using namespace corral::cli;
  // A program that closes its end of a pipe must not kill corral with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  remember_invocation(argv);
  if (argc >= 2) {
    std::string command = argv[1];
    std::vector<std::string> args(argv + 2, argv + argc);
    if (command == "serve") return serve_command(args);
    if (command == "e2b") return e2b_command(args);
    if (command == "run" && !asks_for_help(args)) {
      // Flags it refuses, with the usage, are said by the in-process command.
      auto options = parse_run_options(args);
      if (options && !options->nodes.empty()) return run_on_nodes(*options);
      if (options && !options->flags.connect_socket.empty()) {
        if (auto read = read_stdin_file(*options); !read) return refuse_run_flags(read.error());
        return run_via_daemon(*options);
      }
    }
  }
  return run_local_commands(argc, argv);
}
