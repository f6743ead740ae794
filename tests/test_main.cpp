#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

// Every runtime this program starts, and every corral it runs (daemons, the CLI), keeps its
// workspaces in a temporary directory removed at the end, never in the machine's own.
int main(int argc, char* argv[]) {
  std::string dir = "/tmp/corral-test-workspaces-" + std::to_string(::getpid());
  ::setenv("CORRAL_WORKSPACES_DIR", dir.c_str(), 1);
  int failed = Catch::Session().run(argc, argv);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return failed;
}
