// The host tier: development only. The exec helper gives the program a cleared
// environment, its own session and process group, and kills every descendant when it
// ends; nothing restricts what the program can read, write or reach. Selecting it needs an
// explicit opt-in and production mode refuses it (tiers/tier_registry.hpp).
#pragma once

#include "tiers/tier.hpp"

namespace corral {

class host_tier : public tier {
public:
  std::string name() const override { return "host"; }
  tier_status available() const override { return {true, ""}; }
  tier_capabilities capabilities() const override;
  expected<launch_plan> plan(const launch_request& request, const lease_grant& grant) const override;
};

} // namespace corral
