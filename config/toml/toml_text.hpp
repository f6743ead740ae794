// The text toml++ parses, and positions in it. toml++ 3.3.0 (Debian 12) reaches
// __builtin_unreachable when it asks whether a character in some ranges is whitespace
// (marzer/tomlplusplus#190, fixed upstream after 3.3.0), and it asks wherever a parse path
// checks for whitespace: undefined behaviour on operator input. So the text toml++ sees
// carries those characters as private-use stand-ins (which it handles), and every string
// and key read back is mapped home. Columns still count characters.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace corral {

// `text` with the characters toml++ 3.3.0 cannot classify replaced by their stand-ins.
std::string to_toml_text(std::string_view text);

// A string or key toml++ read, with the stand-ins mapped back to the operator's characters.
std::string from_toml(std::string_view s);

// The byte offset of the first stand-in already in `text` (npos when none). The stand-ins
// must be unambiguous, so a file that holds one is refused before it is parsed.
std::size_t find_stand_in(std::string_view text);

// "line:column" of a byte offset, both from 1; columns count characters, as toml++ does.
std::string line_column(std::string_view text, std::size_t offset);

} // namespace corral
