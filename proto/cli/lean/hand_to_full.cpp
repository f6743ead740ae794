// The lean `corral` links neither CAF's middleman nor TLS nor the HTTP stack, nor
// OpenSSL's libcrypto: each start would pay their loading and relocations, which were the
// largest part of a one-shot `corral run` (issue 17). The commands that need them, `serve`,
// `run --nodes` and `e2b` (its keys are drawn and compared with libcrypto), become
// corral-full with the same arguments: exec keeps the pid, so a supervisor's signals,
// systemd's MAINPID and a test's kill still reach the daemon.
#include <cerrno>
#include <cstring>
#include <iostream>
#include <unistd.h>

#include "config/companion_program.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/invocation.hpp"
#include "proto/cli/run_options.hpp"

#ifndef CORRAL_INSTALLED_FULL
#define CORRAL_INSTALLED_FULL "/usr/local/libexec/corral/corral-full"
#endif

namespace corral::cli {

namespace {

int hand_to_full_program(const char* what) {
  auto full = find_companion_program("corral-full", CORRAL_INSTALLED_FULL);
  if (full.empty()) {
    std::cerr << "corral: " << what << " is served by corral-full, which was not found beside this program or at "
              << CORRAL_INSTALLED_FULL << " (reinstall corral: cmake --install puts it there)\n";
    return kExitRefused;
  }
  ::execv(full.c_str(), remembered_invocation());
  std::cerr << "corral: cannot run " << full << " for " << what << ": " << std::strerror(errno) << "\n";
  return kExitRefused;
}

} // namespace

int serve_command(const std::vector<std::string>&) { return hand_to_full_program("serve"); }

int run_on_nodes(const run_options&) { return hand_to_full_program("run --nodes"); }

int e2b_command(const std::vector<std::string>&) { return hand_to_full_program("e2b"); }

} // namespace corral::cli
