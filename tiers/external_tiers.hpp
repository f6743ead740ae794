// The tiers that wrap an external runtime: gvisor (runsc), container (podman/docker CLI),
// microvm (a VMM with KVM) and e2b (a remote service). Each has a preflight bounded by a
// deadline, run once on first use, so a hung runtime binary cannot freeze dispatch.
//
// None of them can launch yet: their launchers are the work of a later issue. Until then
// every one reports unavailable, saying what its preflight found and that corral does not
// launch through it, so nothing ever runs weaker, and nothing falls back to host.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include "config/profile.hpp"
#include "tiers/preflight.hpp"
#include "tiers/tier.hpp"
#include "tiers/tier_registry.hpp"

namespace corral {

class external_tier : public tier {
public:
  external_tier(std::string name, std::chrono::milliseconds deadline)
      : name_(std::move(name)), deadline_(deadline) {}
  std::string name() const override { return name_; }
  tier_status available() const override;
  tier_capabilities capabilities() const override { return {}; }  // nothing until it launches
  expected<launch_plan> plan(const launch_request&, const lease_grant&) const override;

protected:
  // What the machine offers for this tier: found and working, or why not. Bounded by
  // `deadline`.
  virtual tier_status preflight(std::chrono::milliseconds deadline) const = 0;

private:
  std::string name_;
  std::chrono::milliseconds deadline_;
  mutable std::once_flag once_;
  mutable tier_status status_;
};

// gvisor, container, microvm and e2b, configured from the profile's tables.
void add_external_tiers(tier_registry& registry, const profile& prof, std::chrono::milliseconds deadline);

// For tests and doctor: the preflight of a runtime binary with a probe argv.
std::unique_ptr<external_tier> make_gvisor_tier(const gvisor_settings& s, std::chrono::milliseconds deadline);
std::unique_ptr<external_tier> make_container_tier(const container_settings& s, std::chrono::milliseconds deadline);

} // namespace corral
