// UTF-8 as every floor needs it: the profile loader (every string must survive a JSON
// descriptor), the output collector (cut a capped stream at a character boundary), the
// daemon (whole characters per notification; invalid bytes replaced or base64'd). In
// config/ because config is the lowest floor: tiers, actors and proto all reach it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace corral {

// Length of the well-formed UTF-8 sequence at s[i] (1 to 4), or 0 when the bytes there are
// not one: truncated, a stray continuation byte, overlong, a surrogate, past U+10FFFF.
// When `cp` is given it receives the code point.
std::size_t utf8_sequence_at(std::string_view s, std::size_t i, char32_t* cp = nullptr);

bool is_valid_utf8(std::string_view s);
// `s` with U+FFFD in place of each byte that is not part of a well-formed character.
std::string to_valid_utf8(std::string_view s);

// Bytes at the end of `s` that begin a character whose remaining bytes are missing
// (0 to 3; 0 when `s` ends on a character boundary or in bytes no more input can complete).
std::size_t incomplete_utf8_tail(std::string_view s);

} // namespace corral
