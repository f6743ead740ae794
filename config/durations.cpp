#include "config/durations.hpp"

#include <cmath>
#include <cstdlib>

namespace corral {

expected<std::chrono::milliseconds> parse_duration(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return make_failure(failure_kind::invalid_request,
                        "'" + text + "' is not a duration (" + why + "); write e.g. 500ms, 30s, 5m or a number of seconds");
  };
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.'))
    return bad("it must start with a number");
  char* end = nullptr;
  double number = std::strtod(text.c_str(), &end);
  std::string unit(end);
  double ms_per_unit = 0;
  if (unit.empty() || unit == "s") ms_per_unit = 1000;
  else if (unit == "ms") ms_per_unit = 1;
  else if (unit == "m") ms_per_unit = 60'000;
  else if (unit == "h") ms_per_unit = 3'600'000;
  else return bad("unknown unit '" + unit + "'; the units are ms, s, m and h");
  double ms = number * ms_per_unit;
  if (!std::isfinite(ms) || ms > 365.0 * 24 * 3'600'000) return bad("at most a year");
  if (!(ms >= 1)) return bad("it must be at least 1ms");
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(ms)));
}

} // namespace corral
