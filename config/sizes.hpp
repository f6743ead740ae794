// Human sizes in corral.toml and on the command line: "512m", "2g", "64k", "1048576".
// Binary units (k = 1024). Zero, negative, fractional garbage and overflow are errors.
#pragma once

#include <cstdint>
#include <string>

#include "config/failure.hpp"

namespace corral {

expected<std::uint64_t> parse_size(const std::string& text);

} // namespace corral
