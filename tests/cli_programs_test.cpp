// The CLI's programs: `corral`, which every command starts (proto/cli/front/) and which
// serves `run` through a daemon alone; corral-local.so, which it opens for the in-process
// commands; and corral-full, which `serve`, `run --nodes` and `e2b` become.
#include <catch2/catch.hpp>

#include <algorithm>
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
// What a command line says on both outputs, its exit status appended ("status=N").
std::string said_by(const std::string& command_line) { return shell_output(command_line + " 2>&1; echo \"status=$?\""); }

// The build's corral copied alone into `dir`: none of its companions beside it.
std::string lone_corral(const temp_dir& dir) {
  auto copy = dir / "corral";
  std::filesystem::copy_file(CORRAL_TEST_CLI, copy);
  return copy;
}

std::string local_module() { return (std::filesystem::path(CORRAL_TEST_CLI).parent_path() / "corral-local.so").string(); }

} // namespace

TEST_CASE("corral loads no actor runtime, corral-local.so no node, TLS, HTTP or crypto library, corral-full all", "[cli]") {
  if (shell_output("command -v readelf").empty()) {
    WARN("readelf (binutils) is not installed: skipped");
    return;
  }
  auto front = needed_libraries(CORRAL_TEST_CLI);
  auto local = needed_libraries(local_module());
  auto full = needed_libraries(full_program());
  INFO("corral needs " << front.size() << " libraries, corral-local.so " << local.size() << ", corral-full " << full.size());
  // The reading works: each names the C library, the two with commands the actor library.
  REQUIRE(names_one_of(front, "libc.so"));
  REQUIRE(names_one_of(local, "libcaf_core"));
  REQUIRE(names_one_of(full, "libcaf_core"));
  // The program every command starts loads nothing it does not use to reach a daemon.
  for (const char* stem : {"libcaf_core", "libuv", "libtomlplusplus", "libspdlog", "libzstd", "libcrypto", "libssl"}) {
    INFO(stem);
    CHECK_FALSE(names_one_of(front, stem));
  }
  for (const char* stem : {"libcaf_io", "libcaf_openssl", "libssl", "libhttp_parser", "libcrypto"}) {
    INFO(stem);
    CHECK_FALSE(names_one_of(local, stem));
  }
  // The daemon's stack is in corral-full, where serve and --nodes run.
  CHECK(names_one_of(full, "libcaf_io"));
  CHECK(names_one_of(full, "libssl"));
  CHECK(names_one_of(full, "libcrypto"));
  // corral-local.so exports its entry alone: its own references are bound at its link.
  auto exported = shell_output("nm -D --defined-only '" + local_module() + "' 2>/dev/null");
  CHECK(exported.find("corral_local_main") != std::string::npos);
  CHECK(std::count(exported.begin(), exported.end(), '\n') <= 2);
}

TEST_CASE("the lean corral still takes SHA-256 digests: libcrypto is opened when one is asked for", "[cli]") {
  // describe's digest is the SHA-256 of the descriptor (config/sha256.cpp).
  auto said = said_by(std::string(CORRAL_TEST_CLI) + " describe");
  INFO(said);
  CHECK(said.find("status=0") != std::string::npos);
  CHECK(said.find("\"digest\": \"sha256:") != std::string::npos);
  CHECK(said.find("SHA-256 is unavailable") == std::string::npos);
}

TEST_CASE("corral serve and e2b become corral-full, and say what to do when it is missing", "[cli]") {
  // Beside the build's corral: serve's and e2b's own usage, from corral-full.
  auto usage = said_by(std::string(CORRAL_TEST_CLI) + " serve --help");
  CHECK(usage.find("corral serve") != std::string::npos);
  CHECK(usage.find("status=0") != std::string::npos);
  auto e2b = said_by(std::string(CORRAL_TEST_CLI) + " e2b --help");
  CHECK(e2b.find("corral e2b key add") != std::string::npos);
  CHECK(e2b.find("status=0") != std::string::npos);

  if (exists(CORRAL_TEST_INSTALLED_FULL)) {
    WARN(CORRAL_TEST_INSTALLED_FULL " is installed, so a lone corral finds it: the missing case is skipped");
    return;
  }
  temp_dir alone;
  auto copy = lone_corral(alone);
  for (const char* invocation :
       {" serve --socket /nonexistent/s", " run --nodes 127.0.0.1:1 -- /bin/true", " e2b key ls --dir /nonexistent"}) {
    auto said = said_by(copy + invocation);
    INFO(said);
    CHECK(said.find("corral-full") != std::string::npos);
    CHECK(said.find("was not found") != std::string::npos);
    CHECK(said.find("status=125") != std::string::npos);
  }
}

TEST_CASE("corral without corral-local.so says what to do, and still reaches a daemon", "[cli]") {
  if (exists(CORRAL_TEST_INSTALLED_LOCAL)) {
    WARN(CORRAL_TEST_INSTALLED_LOCAL " is installed, so a lone corral finds it: skipped");
    return;
  }
  temp_dir alone;
  auto copy = lone_corral(alone);
  auto said = said_by(copy + " run -- /bin/echo ran");
  INFO(said);
  CHECK(said.find("corral-local.so") != std::string::npos);
  CHECK(said.find("was not found") != std::string::npos);
  CHECK(said.find("status=125") != std::string::npos);
  CHECK(said.find("ran\n") == std::string::npos);
  // The daemon's path needs no module: the connect error is the daemon's absence.
  auto via = said_by(copy + " run --connect /nonexistent/corral.sock -- /bin/echo ran");
  INFO(via);
  CHECK(via.find("corral-local.so") == std::string::npos);
  CHECK(via.find("/nonexistent/corral.sock") != std::string::npos);
  CHECK(via.find("status=125") != std::string::npos);
}

} // namespace corral
