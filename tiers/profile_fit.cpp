#include "tiers/profile_fit.hpp"

namespace corral {

std::optional<failure> profile_refusal(const tier& t, const profile& p) {
  // Fail closed: a tier that shows the roots without the masks would expose the .git or
  // the config file they cover.
  if (!t.builds_masked_view() && (!p.masks.empty() || !p.working_dir.empty()))
    return make_failure(failure_kind::tier_unavailable,
                        "the " + t.name() + " tier cannot hold this profile: " +
                            (p.masks.empty() ? std::string("a working directory inside the view (--cwd, --here)")
                                             : "masks over protected paths inside its roots (" +
                                                   p.masks.front().virtual_path + ")") +
                            " is built by the landlock tier only; use --tier landlock, or narrow the roots");
  if (p.network == network_mode::allowlist && !t.enforces_network_allowlist())
    return make_failure(failure_kind::refused,
                        "the " + t.name() + " tier cannot enforce a network allow-list "
                        "([sandbox.network] mode = \"allowlist\"); it is enforced on the landlock tier only. "
                        "Choose that tier or set the mode to \"none\" or \"host\"");
  return std::nullopt;
}

} // namespace corral
