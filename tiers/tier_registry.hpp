// The tiers this runtime knows, and the one place that decides whether a caller may use
// one. Nothing here falls back: an unknown, unavailable or refused tier is an error that
// says why and what to do.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/failure.hpp"
#include "tiers/tier.hpp"

namespace corral {

struct selection_policy {
  bool allow_host = false;  // the operator opted in to running on the host
  bool production = false;  // production mode: the host tier is refused whatever else is set
};

// CORRAL_ALLOW_HOST=1 opts in (as does the --allow-host flag, passed as `flag`);
// CORRAL_PRODUCTION=1 turns on production mode.
selection_policy selection_policy_from_env(bool allow_host_flag);

// "tier0" -> "host", "tier1" -> "container", "tier2" -> "gvisor", "tier3" -> "microvm";
// other names are returned as they are.
std::string canonical_tier_name(const std::string& name_or_alias);

class tier_registry {
public:
  void add(std::shared_ptr<const tier> t);
  // The tier, once it is known, allowed by `policy` and available on this machine.
  expected<std::shared_ptr<const tier>> select(const std::string& name_or_alias,
                                               const selection_policy& policy) const;
  std::shared_ptr<const tier> find(const std::string& name_or_alias) const;
  const std::vector<std::shared_ptr<const tier>>& all() const { return tiers_; }

private:
  std::vector<std::shared_ptr<const tier>> tiers_;
};

} // namespace corral
