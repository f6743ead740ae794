// What a refused tier shows of its engine's output: the error, not the warning before it.
#include <catch2/catch.hpp>

#include "tiers/external/external_tiers.hpp"

using namespace corral;

TEST_CASE("an engine's error line is shown, not the warnings printed before it", "[unit][tiers]") {
  // As podman prints it for a user without newuidmap.
  std::string podman =
      "time=\"2026-12-05T06:00:00Z\" level=warning msg=\"The cgroupv2 manager is set to systemd but there is no "
      "systemd user session available\"\n"
      "time=\"2026-12-05T06:00:00Z\" level=warning msg=\"Falling back to --cgroup-manager=cgroupfs\"\n"
      "Error: command required for rootless mode with multiple IDs: exec: \"newuidmap\": executable file not "
      "found in $PATH\n";
  CHECK(telling_line(podman) ==
        "Error: command required for rootless mode with multiple IDs: exec: \"newuidmap\": executable file not "
        "found in $PATH");
  SECTION("without an error line, the first line that is not a warning") {
    CHECK(telling_line("WARNING: no swap limit support\nthe daemon is not running\n") == "the daemon is not running");
  }
  SECTION("only warnings: the first of them; nothing: nothing") {
    CHECK(telling_line("\n  \nWARN one\nWARN two") == "WARN one");
    CHECK(telling_line("") == "");
  }
  SECTION("a long line is cut at 200 bytes") {
    auto shown = telling_line("error: " + std::string(500, 'x'));
    CHECK(shown.size() == 200 + std::string("…").size());
  }
}
