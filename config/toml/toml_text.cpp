#include "config/toml/toml_text.hpp"

#include "config/utf8.hpp"

namespace corral {

namespace {

// The ranges toml++ 3.3.0 cannot classify, each moved to a block of the private-use area.
struct shifted_range {
  char32_t first, last;
  char32_t to;
};
constexpr shifted_range kShifted[] = {
    {0xa1, 0x499, 0xe000}, {0x2c5e, 0x3057, 0xe000 + 0x3f9}, {0xfb26, 0xfefe, 0xe000 + 0x3f9 + 0x3fa}};
constexpr char32_t kShiftedEnd = 0xe000 + 0x3f9 + 0x3fa + 0x3d9;  // one past the last stand-in

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// Rewrites code points with `map`; malformed bytes pass through for toml++ to report.
template <class Map>
std::string remap(std::string_view s, Map map) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    std::size_t n = utf8_sequence_at(s, i, &cp);
    if (n == 0) {
      out += s[i++];
      continue;
    }
    append_utf8(out, map(cp));
    i += n;
  }
  return out;
}

char32_t shift_for_toml(char32_t cp) {
  for (auto& r : kShifted)
    if (cp >= r.first && cp <= r.last) return r.to + (cp - r.first);
  return cp;
}

char32_t shift_home(char32_t cp) {
  for (auto& r : kShifted)
    if (cp >= r.to && cp <= r.to + (r.last - r.first)) return r.first + (cp - r.to);
  return cp;
}

} // namespace

std::string to_toml_text(std::string_view text) { return remap(text, shift_for_toml); }

// The stand-ins all encode with a leading 0xee byte: most strings need no work.
std::string from_toml(std::string_view s) {
  return s.find('\xee') == std::string_view::npos ? std::string(s) : remap(s, shift_home);
}

std::size_t find_stand_in(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    std::size_t n = utf8_sequence_at(text, i, &cp);
    if (n && cp >= 0xe000 && cp < kShiftedEnd) return i;
    i += n ? n : 1;
  }
  return std::string_view::npos;
}

std::string line_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

} // namespace corral
