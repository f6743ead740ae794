// The grant flags `run`, `mcp`, `shell` and `describe` share (--ro, --rw, --here, --env,
// --net, --cwd): parsed once here, applied by config/boundary_grants.hpp.
#pragma once

#include <string>
#include <vector>

#include "config/boundary_grants.hpp"
#include "config/failure.hpp"
#include "config/profile.hpp"

namespace corral::cli {

// When args[i] is a grant flag, consumes it (and its value, advancing i) into `g` and
// answers true; false when it is not one. A bad value is an error that names the flag.
expected<bool> take_grant_flag(const std::vector<std::string>& args, std::size_t& i, boundary_grants& g);

// With --connect the daemon's profile applies: flags that shape the boundary are refused
// (as --config is), while --env travels in the request.
status connect_excludes_grants(const boundary_grants& g);

// The usage lines of the grant flags, for each command's --help.
extern const char* const kGrantUsage;
extern const char* const kGrantsHeading;

} // namespace corral::cli
