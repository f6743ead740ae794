// `corral mcp`'s gateway flags: a policy for one invocation (config/mcp_policy.hpp), applied
// on top of the profile's [mcp] (both must pass), and the pin helpers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/failure.hpp"
#include "config/mcp_policy.hpp"

namespace corral::cli {

struct mcp_policy_flags {
  mcp_policy policy;
  bool print_pin = false;
  std::string write_pin;  // --write-pin FILE
};

extern const char* const kMcpPolicyUsage;

// When args[i] is a gateway flag, consumes it (and its value) and answers true.
expected<bool> take_mcp_policy_flag(const std::vector<std::string>& args, std::size_t& i, mcp_policy_flags& f);

} // namespace corral::cli
