// Durations on the command line: "500ms", "30s", "5m", "1h", or a plain number of seconds
// ("1.5"). Zero, negative, unknown units and more than a year are errors.
#pragma once

#include <chrono>
#include <string>

#include "config/failure.hpp"

namespace corral {

expected<std::chrono::milliseconds> parse_duration(const std::string& text);

} // namespace corral
