#include "tiers/default_tiers.hpp"

#include "tiers/contained/contained_tier.hpp"
#include "tiers/external/external_tiers.hpp"
#include "tiers/host_tier.hpp"
#include "tiers/jail/landlock_tier.hpp"

namespace corral {

std::shared_ptr<tier_registry> build_default_tiers(const profile& prof, const kernel_features& features,
                                                   const std::string& verdict_dir) {
  auto registry = std::make_shared<tier_registry>();
  registry->add(std::make_shared<landlock_tier>(prof, features));
  registry->add(std::make_shared<contained_tier>(prof, features));
  registry->add(std::make_shared<host_tier>());
  // Each external preflight runs once, on first use, within this bound. It starts a trial
  // sandbox or container: about a second when idle, several on a loaded small machine.
  add_external_tiers(*registry, prof, features, std::chrono::milliseconds(10000),
                     verdict_dir.empty() ? nullptr : std::make_shared<preflight_verdicts>(verdict_dir));
  return registry;
}

} // namespace corral
