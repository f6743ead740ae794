// What this machine can enforce, as JSON (corral doctor --json, the daemon's
// `capabilities`) and as text for a person (corral doctor).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "config/failure.hpp"
#include "config/profile.hpp"
#include "tiers/kernel_features.hpp"
#include "tiers/tier_registry.hpp"

namespace corral {

nlohmann::json kernel_features_json(const kernel_features& f);
nlohmann::json tier_capabilities_json(const tier_capabilities& c);
// With `prof`, a tier that cannot hold that profile (tiers/profile_fit.hpp) says why in
// its `refused`, as the host tier says when it is not opted into.
nlohmann::json machine_report(const kernel_features& f, const tier_registry& tiers,
                              const selection_policy& policy, const profile* prof = nullptr);
std::string render_machine_report(const nlohmann::json& report);

// Loads the profile (`config_path`, or ./corral.toml), measures the kernel and builds the
// tier list, as a run would.
expected<nlohmann::json> machine_report_for_cli(const std::string& config_path);

} // namespace corral
