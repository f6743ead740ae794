#include "config/sizes.hpp"

#include <cctype>
#include <limits>

namespace corral {

expected<std::uint64_t> parse_size(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return make_failure(failure_kind::invalid_request,
                        "'" + text + "' is not a size (" + why + "); write e.g. 512m, 2g, 64k or a byte count");
  };
  std::size_t i = 0;
  std::uint64_t number = 0;
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    unsigned digit = static_cast<unsigned>(text[i] - '0');
    if (number > (max - digit) / 10) return bad("too large");
    number = number * 10 + digit;
    ++i;
  }
  if (i == 0) return bad("it must start with digits");
  std::uint64_t unit = 1;
  std::string suffix = text.substr(i);
  for (auto& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (suffix.empty() || suffix == "b") unit = 1;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib") unit = 1ull << 10;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib") unit = 1ull << 20;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib") unit = 1ull << 30;
  else if (suffix == "t" || suffix == "tb" || suffix == "tib") unit = 1ull << 40;
  else return bad("unknown unit '" + suffix + "'");
  if (number == 0) return bad("it must be positive");
  if (number > max / unit) return bad("too large");
  return number * unit;
}

} // namespace corral
