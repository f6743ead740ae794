// The limit flags of `run`, `mcp` and `shell`: --memory SIZE, --pids N, --cpu CORES and
// --timeout DURATION (500ms, 30s, 5m, or seconds). Each may only tighten the profile (the
// supervisor refuses or clamps a wider one, as the profile's on_widen says); a value below
// its floor (config/limits.hpp) is refused here, naming the floor.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/failure.hpp"

namespace corral::cli {

struct limit_flags {
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> pids;
  std::optional<double> cpu_cores;
  std::optional<std::chrono::milliseconds> timeout;

  bool any() const { return memory_bytes || pids || cpu_cores || timeout; }
};

// When args[i] is a limit flag, reads it and its value (advancing i past the value) and
// returns true; false when args[i] is another flag. A bad value is the failure.
expected<bool> parse_limit_flag(const std::vector<std::string>& args, std::size_t& i, limit_flags& out);

// The flags' lines for a command's usage text.
extern const char* const kLimitFlagsUsage;

// With --connect the daemon's profile and limits apply: limit flags are refused there.
status limit_flags_need_in_process(const limit_flags& flags, const std::string& connect_socket);

// Copies the flags onto a request (exec, session or terminal: the same field names).
template <class Request>
void apply_limit_flags(const limit_flags& flags, Request& request) {
  if (flags.memory_bytes) request.memory_limit_bytes = flags.memory_bytes;
  if (flags.pids) request.pids_limit = flags.pids;
  if (flags.cpu_cores) request.cpu_cores = flags.cpu_cores;
}

} // namespace corral::cli
