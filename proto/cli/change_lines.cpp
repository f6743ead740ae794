#include "proto/cli/change_lines.hpp"

namespace corral::cli {

std::string change_line(const nlohmann::json& change) {
  auto what = change.value("change", "");
  char letter = what == "added" ? 'A' : what == "removed" ? 'D' : 'M';
  return std::string(1, letter) + " " + change.value("path", "") + (change.value("type", "") == "dir" ? "/" : "");
}

} // namespace corral::cli
