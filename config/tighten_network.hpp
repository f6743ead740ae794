// A request's network allow-list may narrow the profile's, never widen it: each entry it
// asks for must be covered by one of the profile's allow entries (same or fewer ports, the
// same name or one under a wildcard, a range inside a range). The profile's deny entries
// always stay. What happens to an entry that would widen is profile.on_widen's choice.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/failure.hpp"
#include "config/profile.hpp"

namespace corral {

// No entries asked: the profile's lists unchanged. Entries asked of a profile whose mode
// is not allowlist are refused: none admits nothing to narrow, and host cannot become an
// allow-list per request without a different jail.
expected<egress_lists> tighten_network(const profile& prof, const std::optional<std::vector<std::string>>& asked);

} // namespace corral
