// `--allow-net a,b,c` on run, mcp and shell: the operator's allow-list for one in-process
// invocation. It sets the profile's network mode to allowlist with exactly these allow
// entries (the profile's deny entries stay). With --connect the daemon's profile is the
// operator's boundary: the flag is sent as the request's `network_allow`, which can only
// narrow the daemon's allow-list (config/tighten_network.hpp), and the daemon refuses it
// when its profile is not in allowlist mode.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/failure.hpp"
#include "config/profile.hpp"

namespace corral::cli {

// The entries of one --allow-net value, each checked as a profile entry would be.
expected<std::vector<std::string>> parse_allow_net(const std::string& value);

// Applies the entries (no-op when empty).
status apply_allow_net(profile& prof, const std::vector<std::string>& entries);

// The request's narrowing for --connect: none when the flag was not given.
std::optional<std::vector<std::string>> allow_net_request(const std::vector<std::string>& entries);

} // namespace corral::cli
