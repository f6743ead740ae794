// The two CLI programs: the lean `corral` every one-shot run starts, and corral-full that
// `serve`, `run --nodes` and `e2b` become (proto/cli/lean/hand_to_full.cpp).
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "tests/runtime_fixture.hpp"

namespace corral {

using namespace testing;

namespace {

// The shared objects an ELF file names as NEEDED, read by readelf (binutils, with g++);
// empty when readelf cannot read it.
std::set<std::string> needed_libraries(const std::string& program) {
  std::set<std::string> out;
  std::istringstream dynamic(shell_output("readelf -d '" + program + "' 2>/dev/null"));
  for (std::string line; std::getline(dynamic, line);) {
    if (line.find("(NEEDED)") == std::string::npos) continue;
    auto open = line.find('['), close = line.find(']');
    if (open != std::string::npos && close > open) out.insert(line.substr(open + 1, close - open - 1));
  }
  return out;
}

bool names_one_of(const std::set<std::string>& libraries, const std::string& stem) {
  for (const auto& l : libraries)
    if (l.rfind(stem, 0) == 0) return true;
  return false;
}

std::string full_program() { return (std::filesystem::path(CORRAL_TEST_CLI).parent_path() / "corral-full").string(); }

} // namespace

TEST_CASE("the lean corral loads no node, TLS, HTTP or crypto library, and corral-full does", "[cli]") {
  if (shell_output("command -v readelf").empty()) {
    WARN("readelf (binutils) is not installed: skipped");
    return;
  }
  auto lean = needed_libraries(CORRAL_TEST_CLI);
  auto full = needed_libraries(full_program());
  INFO("corral needs " << lean.size() << " libraries, corral-full " << full.size());
  // The reading works: both name the actor library they run on.
  REQUIRE(names_one_of(lean, "libcaf_core"));
  REQUIRE(names_one_of(full, "libcaf_core"));
  for (const char* stem : {"libcaf_io", "libcaf_openssl", "libssl", "libhttp_parser", "libcrypto"}) {
    INFO(stem);
    CHECK_FALSE(names_one_of(lean, stem));
  }
  // The daemon's stack is in corral-full, where serve and --nodes run.
  CHECK(names_one_of(full, "libcaf_io"));
  CHECK(names_one_of(full, "libssl"));
  CHECK(names_one_of(full, "libcrypto"));
}

TEST_CASE("the lean corral still takes SHA-256 digests: libcrypto is opened when one is asked for", "[cli]") {
  // describe's digest is the SHA-256 of the descriptor (config/sha256.cpp).
  auto said = shell_output(std::string(CORRAL_TEST_CLI) + " describe 2>&1; echo \"status=$?\"");
  INFO(said);
  CHECK(said.find("status=0") != std::string::npos);
  CHECK(said.find("\"digest\": \"sha256:") != std::string::npos);
  CHECK(said.find("SHA-256 is unavailable") == std::string::npos);
}

TEST_CASE("corral serve and e2b become corral-full, and say what to do when it is missing", "[cli]") {
  // Beside the build's corral: serve's and e2b's own usage, from corral-full.
  auto usage = shell_output(std::string(CORRAL_TEST_CLI) + " serve --help 2>&1; echo \"status=$?\"");
  CHECK(usage.find("corral serve") != std::string::npos);
  CHECK(usage.find("status=0") != std::string::npos);
  auto e2b = shell_output(std::string(CORRAL_TEST_CLI) + " e2b --help 2>&1; echo \"status=$?\"");
  CHECK(e2b.find("corral e2b key add") != std::string::npos);
  CHECK(e2b.find("status=0") != std::string::npos);

  if (exists(CORRAL_TEST_INSTALLED_FULL)) {
    WARN(CORRAL_TEST_INSTALLED_FULL " is installed, so a lone corral finds it: the missing case is skipped");
    return;
  }
  temp_dir alone;
  auto copy = alone / "corral";
  std::filesystem::copy_file(CORRAL_TEST_CLI, copy);
  for (const char* invocation :
       {" serve --socket /nonexistent/s", " run --nodes 127.0.0.1:1 -- /bin/true", " e2b key ls --dir /nonexistent"}) {
    auto said = shell_output(copy + invocation + " 2>&1; echo \"status=$?\"");
    INFO(said);
    CHECK(said.find("corral-full") != std::string::npos);
    CHECK(said.find("was not found") != std::string::npos);
    CHECK(said.find("status=125") != std::string::npos);
  }
}

} // namespace corral
