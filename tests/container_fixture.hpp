// The real-engine side of the container tier's tests, shared by container_tier_test and
// the escape suite: a local busybox image (built once, no registry) and a profile that
// runs it with podman, or the reason podman cannot run the tier here.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

#include "config/profile.hpp"
#include "runtime_fixture.hpp"
#include "tiers/external/container_tier.hpp"
#include "tiers/external/preflight.hpp"

namespace corral::testing {

inline constexpr const char* kTestImage = "corral-test-busybox:latest";

// The image is built once (from busybox-static, no registry) and removed when the test
// program ends if this program built it.
struct test_image {
  bool built = false;
  std::string error;
  test_image() {
    if (std::system(("podman image exists " + std::string(kTestImage) + " 2>/dev/null").c_str()) == 0) return;
    if (::access("/bin/busybox", X_OK) != 0) {
      error = "no /bin/busybox to build the test image from (install busybox-static)";
      return;
    }
    auto cmd = std::string(CORRAL_SOURCE_DIR) + "/scripts/busybox-image " + kTestImage + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) error = "building the test image with scripts/busybox-image failed";
    else built = true;
  }
  ~test_image() {
    if (built) std::system(("podman rmi -f " + std::string(kTestImage) + " >/dev/null 2>&1").c_str());
  }
};

inline profile podman_profile() {
  profile p;
  p.tier = "container";
  p.limit.kill_grace = std::chrono::milliseconds(200);
  p.container.engine = "podman";
  p.container.image = kTestImage;
  // crun refuses this kind of machine's mixed cgroup layout; runc does not.
  if (!find_on_path("runc").empty()) p.container.runtime = "runc";
  return p;
}

// Empty when a real podman can run the tier's containers here; otherwise why not. Asked
// once per test program.
inline std::string podman_unavailable() {
  static const std::string why = [] {
    if (find_on_path("podman").empty()) return std::string("podman is not installed");
    static test_image image;
    if (!image.error.empty()) return image.error;
    auto st = container_tier(podman_profile(), std::chrono::seconds(10)).available();
    return st.available ? std::string() : st.reason;
  }();
  return why;
}

} // namespace corral::testing
