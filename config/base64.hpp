// Base64 (RFC 4648), the one codec the wire formats share: the daemon's `*_base64`
// members (strict: the standard alphabet, padding required) and the E2B API's bytes
// (proto3 JSON: the standard or URL-safe alphabet, padding optional, as Connect clients
// send them).
#pragma once

#include <string>
#include <string_view>

#include "config/failure.hpp"

namespace corral {

enum class base64_input : unsigned char { strict, proto3_json };

// The standard alphabet, padded.
std::string base64_encode(std::string_view bytes);
expected<std::string> base64_decode(std::string_view text, base64_input accept = base64_input::strict);

} // namespace corral
