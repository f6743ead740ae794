// `--allow-net a,b,c` on run, mcp and shell: the operator's allow-list for one in-process
// invocation. It sets the profile's network mode to allowlist with exactly these allow
// entries (the profile's deny entries stay); with --connect the daemon's profile applies,
// so the flag is refused there as --config is.
#pragma once

#include <string>
#include <vector>

#include "config/failure.hpp"
#include "config/profile.hpp"

namespace corral::cli {

// The entries of one --allow-net value, each checked as a profile entry would be.
expected<std::vector<std::string>> parse_allow_net(const std::string& value);

// Applies the entries (no-op when empty).
status apply_allow_net(profile& prof, const std::vector<std::string>& entries);

// Refuses --allow-net together with --connect.
status allow_net_excludes_connect(const std::vector<std::string>& entries, const std::string& connect_socket);

} // namespace corral::cli
