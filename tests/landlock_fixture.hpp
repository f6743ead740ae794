// Whether the landlock tier can run here, for tests that skip (with the reason) where it
// cannot.
#pragma once

#include <string>

#include <catch2/catch.hpp>

#include "config/profile.hpp"
#include "tiers/kernel_features.hpp"
#include "tiers/jail/landlock_tier.hpp"

namespace corral::testing {

// The reason the landlock tier cannot run here, or empty.
inline std::string landlock_unavailable() {
  const profile defaults;
  landlock_tier t(defaults, detect_kernel_features());
  auto st = t.available();
  return st.available ? "" : st.reason;
}

} // namespace corral::testing

#define REQUIRE_LANDLOCK()                                                                  \
  do {                                                                                      \
    auto why = ::corral::testing::landlock_unavailable();                                   \
    if (!why.empty()) {                                                                     \
      WARN("skipped: the landlock tier is unavailable here: " << why);                      \
      return;                                                                               \
    }                                                                                       \
  } while (0)
