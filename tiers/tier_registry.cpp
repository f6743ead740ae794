#include "tiers/tier_registry.hpp"

#include <cstdlib>
#include <cstring>

namespace corral {

namespace {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  return std::strcmp(v, "0") != 0 && std::strcmp(v, "false") != 0 && std::strcmp(v, "no") != 0;
}

} // namespace

selection_policy selection_policy_from_env(bool allow_host_flag) {
  selection_policy p;
  p.allow_host = allow_host_flag || env_flag("CORRAL_ALLOW_HOST");
  p.production = env_flag("CORRAL_PRODUCTION");
  return p;
}

std::string canonical_tier_name(const std::string& name) {
  if (name == "tier0") return "host";
  if (name == "tier1") return "container";
  if (name == "tier2") return "gvisor";
  if (name == "tier3") return "microvm";
  return name;
}

void tier_registry::add(std::shared_ptr<const tier> t) { tiers_.push_back(std::move(t)); }

std::shared_ptr<const tier> tier_registry::find(const std::string& name_or_alias) const {
  auto name = canonical_tier_name(name_or_alias);
  for (auto& t : tiers_)
    if (t->name() == name) return t;
  return nullptr;
}

expected<std::shared_ptr<const tier>> tier_registry::select(const std::string& name_or_alias,
                                                            const selection_policy& policy) const {
  auto t = find(name_or_alias);
  if (!t) {
    std::string known;
    for (auto& k : tiers_) known += (known.empty() ? "" : ", ") + k->name();
    return make_failure(failure_kind::invalid_request,
                        "unknown tier '" + name_or_alias + "' (known: " + known + ")");
  }
  if (t->name() == "host") {
    if (policy.production)
      return make_failure(failure_kind::refused,
                          "the host tier runs code with no isolation and is refused in production mode "
                          "(CORRAL_PRODUCTION is set); choose an isolating tier such as landlock");
    if (!policy.allow_host)
      return make_failure(failure_kind::refused,
                          "the host tier runs code with no isolation; opt in with --allow-host or "
                          "CORRAL_ALLOW_HOST=1 (never in production mode)");
  }
  auto st = t->available();
  if (!st.available)
    return make_failure(failure_kind::tier_unavailable,
                        "the " + t->name() + " tier is unavailable on this machine: " + st.reason);
  return t;
}

} // namespace corral
