// corral: run untrusted code inside the boundary the operator chose. Every command, as
// corral-full's main and the lean program's corral-local.so run them.
#include "proto/cli/cli_main.hpp"

#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "config/version.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/invocation.hpp"

namespace {

const char* const kUsage = R"(usage: corral COMMAND [options]

commands:
  run       run one program or snippet inside the boundary (corral run --help)
  doctor    show what this machine can enforce, and why a tier is unavailable
  describe  print the profile's descriptor: canonical JSON and its SHA-256 digest
  serve     the daemon: JSON-RPC 2.0 on a Unix socket or stdio (corral serve --help)
  mcp       run an MCP server inside the boundary as a transparent stdio proxy (corral mcp --help)
  shell     an interactive terminal inside the boundary (corral shell --help)
  workspace persistent /work dirs in the daemon that commands build on (alias ws;
            corral workspace --help)
  e2b       the API keys of the E2B-compatible API that `serve --e2b-listen` serves
            (corral e2b key add|ls|rm)
  help      this text

corral --version prints the version.

The boundary comes from ./corral.toml (or --config FILE); the default tier is landlock.
The host tier (no isolation) needs --allow-host or CORRAL_ALLOW_HOST=1 and is refused
when CORRAL_PRODUCTION=1.
)";

} // namespace

int corral::cli::cli_main(int argc, char** argv) {
  // A program that closes its end of a pipe must not kill corral with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  corral::cli::remember_invocation(argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::cout << "corral " << corral::corral_version() << "\n";
    return 0;
  }
  auto command = args[0];
  args.erase(args.begin());
  if (command == "run") return corral::cli::run_command(args);
  if (command == "doctor") return corral::cli::doctor_command(args);
  if (command == "describe") return corral::cli::describe_command(args);
  if (command == "serve") return corral::cli::serve_command(args);
  if (command == "mcp") return corral::cli::mcp_command(args);
  if (command == "shell") return corral::cli::shell_command(args);
  if (command == "workspace" || command == "ws") return corral::cli::workspace_command(args);
  if (command == "e2b") return corral::cli::e2b_command(args);
  std::cerr << "corral: unknown command '" << command << "'\n" << kUsage;
  return 2;
}
