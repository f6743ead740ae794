// The E2B-compatible API (proto/e2b/) driven by the official `e2b` npm SDK, unmodified,
// against `corral serve --e2b-listen`: the scenarios of tests/e2b/e2b_e2e.mjs (commands,
// streaming, background processes and kill, stdin, a pty, files, a 64 MiB file, a path
// escape, list and timeout, another key, the boundary seen from outside), at the SDK's
// current version and at an older one. Each scenario asserts both halves of a refusal:
// the attempt ran, and it failed.
#include <array>
#include <cstdio>
#include <fstream>
#include <netinet/in.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "e2b_http_client.hpp"
#include "landlock_fixture.hpp"
#include "runtime_fixture.hpp"
#include "serve_child.hpp"
#include "served_daemon.hpp"

using namespace corral;
using namespace corral::testing;

namespace {

// Installs one SDK version into `dir` (bounded); false with the log's start when npm
// cannot (no registry), which skips the case.
bool install_sdk(const temp_dir& dir, const std::string& version, std::string& log) {
  std::string install = "cd " + dir.path() + " && timeout 240 npm install --no-audit --no-fund --loglevel=error e2b@" +
                        version + " > npm.log 2>&1";
  if (std::system(install.c_str()) == 0) return true;
  log = read_text(dir / "npm.log").substr(0, 500);
  return false;
}

std::string run_capture(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf{};
  while (auto n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

std::string new_key(const std::string& e2b_dir) {
  auto out = run_capture(std::string(CORRAL_TEST_CLI) + " e2b key add --dir " + e2b_dir + " 2>/dev/null");
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}


struct e2b_daemon {
  temp_dir dir{"corral-e2b-"};
  std::string e2b_dir = dir / "e2b";
  std::string key, other_key;
  std::uint16_t port = free_tcp_port();
  std::unique_ptr<served_daemon> daemon;

  e2b_daemon() {
    key = new_key(e2b_dir);
    other_key = new_key(e2b_dir);
    REQUIRE(key.rfind("e2b_", 0) == 0);
    REQUIRE(other_key.rfind("e2b_", 0) == 0);
    daemon = std::make_unique<served_daemon>(std::vector<std::string>{
        "--e2b-listen", "127.0.0.1:" + std::to_string(port), "--e2b-dir", e2b_dir});
  }

  // Runs the scenarios with the SDK in `sdk`; one JSON object per scenario.
  std::vector<nlohmann::json> scenarios(const std::string& sdk, const std::string& names, const std::string& secret) {
    std::string url = "http://127.0.0.1:" + std::to_string(port);
    std::string cmd = "cd " + dir.path() + " && E2B_API_URL=" + url + " E2B_SANDBOX_URL=" + url + " E2B_API_KEY=" + key +
                      " E2B_API_KEY_OTHER=" + other_key + " SECRET_FILE=" + secret +
                      " E2E_SANDBOX_TIMEOUT_MS=120000 timeout 280 node " + std::string(CORRAL_SOURCE_DIR) +
                      "/tests/e2b/e2b_e2e.mjs " + sdk + "/node_modules " + names + " 2>" + (dir / "node.err");
    std::vector<nlohmann::json> out;
    std::istringstream lines(run_capture(cmd));
    for (std::string line; std::getline(lines, line);) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.contains("scenario")) out.push_back(j);
    }
    return out;
  }
};

void check_scenarios(e2b_daemon& d, const temp_dir& sdk, const std::string& names, std::size_t expected) {
  // A secret beside the daemon's files, readable by anyone on the host: only the boundary
  // keeps the sandbox from it.
  auto secret = d.dir / "secret.txt";
  std::ofstream(secret) << "corral-e2b-secret-" << ::getpid() << "\n";
  ::chmod(secret.c_str(), 0644);
  auto results = d.scenarios(sdk.path(), names, secret);
  INFO("node's stderr: " << read_text(d.dir / "node.err").substr(0, 2000));
  CHECK(results.size() == expected);
  for (auto& r : results) {
    INFO(r.dump());
    CHECK(r.value("ok", false));
  }
}

// Every scenario with the SDK at `version`, installed for this case.
void every_scenario_at(const std::string& version) {
  temp_dir sdk("corral-e2b-sdk-");
  std::string log;
  if (!install_sdk(sdk, version, log)) {
    WARN("skipped: npm could not install e2b@" << version << " (no registry?): " << log);
    return;
  }
  e2b_daemon d;
  check_scenarios(d, sdk, "all", 13);
}

} // namespace

TEST_CASE("the official e2b SDK at its current version runs every scenario on corral's E2B API",
          "[e2b][landlock]") {
  REQUIRE_LANDLOCK();
  every_scenario_at("latest");
}

TEST_CASE("the official e2b SDK at the older 2.50.0 runs every scenario on corral's E2B API too",
          "[e2b][landlock]") {
  REQUIRE_LANDLOCK();
  every_scenario_at("2.50.0");
}
