// The tiers that wrap an external runtime: gvisor (runsc, tiers/external/gvisor_tier.hpp),
// container (podman/docker CLI, tiers/external/container_tier.hpp), microvm (a VMM with KVM) and
// e2b (a remote service). Each has a preflight bounded by a deadline, run once on first
// use, so a hung runtime binary cannot freeze dispatch.
//
// A tier whose preflight fails reports unavailable, saying what it found and what to do,
// so nothing ever runs weaker, and nothing falls back to host.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "config/profile.hpp"
#include "tiers/kernel_features.hpp"
#include "tiers/external/preflight.hpp"
#include "tiers/external/preflight_verdicts.hpp"
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
  // Unavailable: the error saying why. Tiers that launch override this.
  expected<launch_plan> plan(const launch_request&, const lease_grant&) const override;
  // Where a successful trial is kept between runs (tiers/external/preflight_verdicts.hpp);
  // without it every preflight runs its trial. Set before the first available().
  void keep_verdicts(std::shared_ptr<const preflight_verdicts> verdicts) { verdicts_ = std::move(verdicts); }

protected:
  // What the machine offers for this tier: found and working, or why not. Bounded by
  // `deadline`.
  virtual tier_status preflight(std::chrono::milliseconds deadline) const = 0;
  failure unavailable_error() const;
  // Runs `trial` unless a fresh success is kept under `key`; keeps a new success.
  tier_status trial_once(const std::string& key, const std::function<tier_status()>& trial) const;

private:
  std::shared_ptr<const preflight_verdicts> verdicts_;
  std::string name_;
  std::chrono::milliseconds deadline_;
  mutable std::once_flag once_;
  mutable tier_status status_;
};

// The probe's verdict on one command: empty when it ran and exited 0 within the
// deadline, else a sentence naming the command and what it printed.
std::string probe_failure(const std::string& what, const std::vector<std::string>& argv,
                          std::chrono::milliseconds deadline);
std::string first_line(const std::string& text);  // at most 200 bytes
// What to show of a failed engine's output: the first line that says error, else the first
// that is not a warning, else the first (each at most 200 bytes).
std::string telling_line(const std::string& output);

// The last component of a path: the scratch dir's unique name also names the execution's
// sandbox or container.
std::string base_name(const std::string& path);

// Creates `dir` (0700), the execution's files an external runtime reads from outside the
// scratch dir, and runs `fill` to write them; on any failure nothing of it is left.
status make_private_dir(const std::string& dir, const std::function<status()>& fill);

// gvisor, container, microvm and e2b, configured from the profile's tables.
void add_external_tiers(tier_registry& registry, const profile& prof, const kernel_features& features,
                        std::chrono::milliseconds deadline,
                        std::shared_ptr<const preflight_verdicts> verdicts = nullptr);

// For tests and doctor: a tier from its table alone (the rest of the profile default).
std::unique_ptr<external_tier> make_gvisor_tier(const gvisor_settings& s, std::chrono::milliseconds deadline);
std::unique_ptr<external_tier> make_container_tier(const container_settings& s, std::chrono::milliseconds deadline);

} // namespace corral
