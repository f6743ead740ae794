#include "tiers/jail/status_line.hpp"

#include <sstream>

namespace corral {

std::optional<status_line> parse_status_line(const std::string& line) {
  std::istringstream in(line);
  std::string word;
  if (!(in >> word)) return std::nullopt;
  status_line s;
  if (word == "step") {
    s.what = status_line::kind::step;
    if (!(in >> s.name >> s.micros)) return std::nullopt;
  } else if (word == "started") {
    s.what = status_line::kind::started;
    if (!(in >> s.pid)) return std::nullopt;
  } else if (word == "failed") {
    s.what = status_line::kind::failed;
    if (!(in >> s.error_number >> s.name)) return std::nullopt;
    std::getline(in >> std::ws, s.message);
  } else if (word == "exited") {
    s.what = status_line::kind::exited;
    int terminated = 0;
    if (!(in >> s.wait_status >> s.maxrss_kb >> s.user_us >> s.system_us >> terminated))
      return std::nullopt;
    s.terminated = terminated != 0;
  } else if (word == "holding") {
    s.what = status_line::kind::holding;
    if (!(in >> s.pid >> s.start_time) || s.pid <= 0 || s.start_time == 0) return std::nullopt;
  } else {
    return std::nullopt;
  }
  return s;
}

} // namespace corral
