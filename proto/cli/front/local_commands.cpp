#include "proto/cli/front/local_commands.hpp"

#include <dlfcn.h>
#include <iostream>

#include "config/companion_program.hpp"
#include "proto/cli/commands.hpp"

#ifndef CORRAL_INSTALLED_LOCAL
#define CORRAL_INSTALLED_LOCAL "/usr/local/libexec/corral/corral-local.so"
#endif

namespace corral::cli {

int run_local_commands(int argc, char** argv) {
  auto module = find_companion_program("corral-local.so", CORRAL_INSTALLED_LOCAL);
  if (module.empty()) {
    std::cerr << "corral: corral-local.so, which runs this command, was not found beside this program or at "
              << CORRAL_INSTALLED_LOCAL << " (reinstall corral: cmake --install puts it there)\n";
    return kExitRefused;
  }
  // RTLD_NOW: a missing symbol is this error, not a crash in the middle of a run. Never
  // closed: the command's threads end with the process.
  void* lib = ::dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  using entry_fn = int (*)(int, char**);
  auto entry = lib ? reinterpret_cast<entry_fn>(::dlsym(lib, "corral_local_main")) : nullptr;
  if (!entry) {
    const char* why = ::dlerror();
    std::cerr << "corral: cannot open " << module << ": " << (why ? why : "no corral_local_main")
              << " (reinstall corral; its libraries come with it)\n";
    return kExitRefused;
  }
  return entry(argc, argv);
}

} // namespace corral::cli
