#include "tiers/workspace/tar_format.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string_view>

namespace corral {

namespace {

// ustar header field offsets and widths (POSIX.1-2001, pax).
constexpr std::size_t kName = 0, kNameLen = 100;
constexpr std::size_t kMode = 100, kModeLen = 8;
constexpr std::size_t kUid = 108, kGid = 116, kIdLen = 8;
constexpr std::size_t kSize = 124, kSizeLen = 12;
constexpr std::size_t kMtime = 136, kMtimeLen = 12;
constexpr std::size_t kChecksum = 148, kChecksumLen = 8;
constexpr std::size_t kTypeflag = 156;
constexpr std::size_t kLinkname = 157, kLinknameLen = 100;
constexpr std::size_t kMagic = 257;  // "ustar\0" then version "00"
constexpr std::size_t kPrefix = 345, kPrefixLen = 155;

failure bad(const std::string& why) { return make_failure(failure_kind::invalid_request, "snapshot archive: " + why); }

// An octal number right-aligned in a field, NUL-terminated; a value too large for the
// field is clamped (the pax header carries the exact one).
void put_octal(std::string& block, std::size_t at, std::size_t width, std::uint64_t value) {
  std::uint64_t max = 1;
  for (std::size_t i = 0; i + 1 < width; ++i) max *= 8;
  value = std::min(value, max - 1);
  for (std::size_t i = width - 1; i-- > 0;) {
    block[at + i] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
  block[at + width - 1] = '\0';
}

void put_text(std::string& block, std::size_t at, std::size_t width, std::string_view text) {
  std::memcpy(block.data() + at, text.data(), std::min(width, text.size()));
}

unsigned checksum(std::string_view block) {
  unsigned sum = 0;
  for (std::size_t i = 0; i < kTarBlock; ++i)
    sum += (i >= kChecksum && i < kChecksum + kChecksumLen) ? ' ' : static_cast<unsigned char>(block[i]);
  return sum;
}

std::string ustar_block(char typeflag, std::string_view name, std::string_view link, std::uint32_t mode,
                        std::uint64_t size, std::int64_t mtime_ns) {
  std::string block(kTarBlock, '\0');
  put_text(block, kName, kNameLen, name);
  put_octal(block, kMode, kModeLen, mode & 07777);
  put_octal(block, kUid, kIdLen, 0);
  put_octal(block, kGid, kIdLen, 0);
  put_octal(block, kSize, kSizeLen, size);
  put_octal(block, kMtime, kMtimeLen, mtime_ns > 0 ? static_cast<std::uint64_t>(mtime_ns / 1'000'000'000) : 0);
  block[kTypeflag] = typeflag;
  put_text(block, kLinkname, kLinknameLen, link);
  std::memcpy(block.data() + kMagic, "ustar\0" "00", 8);
  // Six octal digits, NUL, space: the form every reader accepts.
  put_octal(block, kChecksum, 7, checksum(block));
  block[kChecksum + 7] = ' ';
  return block;
}

// "LEN key=value\n", where LEN counts the whole record, its own digits included.
std::string pax_record(std::string_view key, std::string_view value) {
  std::size_t body = 1 + key.size() + 1 + value.size() + 1;  // " key=value\n"
  std::size_t digits = 1;
  while (std::to_string(body + digits).size() > digits) ++digits;
  return std::to_string(body + digits) + " " + std::string(key) + "=" + std::string(value) + "\n";
}

// Seconds and nanoseconds as pax writes times: "-1.500000000" is 1.5 s before the epoch.
std::string pax_time(std::int64_t ns) {
  bool negative = ns < 0;
  std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  auto frac = std::to_string(magnitude % 1'000'000'000);
  return (negative ? "-" : "") + std::to_string(magnitude / 1'000'000'000) + "." + std::string(9 - frac.size(), '0') + frac;
}

expected<std::int64_t> parse_pax_time(std::string_view text) {
  bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  auto dot = text.find('.');
  auto whole = text.substr(0, dot);
  std::string frac(dot == std::string_view::npos ? "" : text.substr(dot + 1));
  if (frac.size() > 9) frac.resize(9);  // finer than a nanosecond: dropped
  frac.append(9 - frac.size(), '0');
  std::uint64_t s = 0, n = 0;
  auto r1 = std::from_chars(whole.data(), whole.data() + whole.size(), s);
  auto r2 = std::from_chars(frac.data(), frac.data() + frac.size(), n);
  if (whole.empty() || r1.ptr != whole.data() + whole.size() || r1.ec != std::errc{} || r2.ptr != frac.data() + frac.size() ||
      s > 9'000'000'000ULL)
    return bad("mtime '" + std::string(text) + "' is not a time");
  auto v = static_cast<std::int64_t>(s * 1'000'000'000 + n);
  return negative ? -v : v;
}

expected<std::uint64_t> parse_octal(std::string_view field, const char* what) {
  std::uint64_t v = 0;
  std::size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  std::size_t digits = 0;
  for (; i < field.size() && field[i] >= '0' && field[i] <= '7'; ++i, ++digits) {
    if (v >> 60) return bad(std::string(what) + " is too large");
    v = v * 8 + static_cast<std::uint64_t>(field[i] - '0');
  }
  for (; i < field.size(); ++i)
    if (field[i] != ' ' && field[i] != '\0') return bad(std::string(what) + " is not an octal number");
  if (digits == 0) return bad(std::string(what) + " is empty");
  return v;
}

std::string_view field_text(std::string_view block, std::size_t at, std::size_t width) {
  auto f = block.substr(at, width);
  return f.substr(0, std::min(f.size(), f.find('\0')));
}

// A snapshot's paths: relative, no "." or ".." or empty component, bounded.
status check_path(const std::string& path, const char* what) {
  if (path.empty() || path.size() > kTarMaxPath) return bad(std::string(what) + " is empty or longer than 4096 bytes");
  if (path.find('\0') != std::string::npos) return bad(std::string(what) + " holds a NUL byte");
  if (path[0] == '/') return bad(std::string(what) + " '" + path + "' is absolute");
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    auto part = std::string_view(path).substr(start, end - start);
    if (part.empty() || part == "." || part == "..")
      return bad(std::string(what) + " '" + path + "' has an empty, '.' or '..' component");
    start = end + 1;
  }
  return ok();
}

struct pax_values {
  std::optional<std::string> path, linkpath;
  std::optional<std::uint64_t> size;
  std::optional<std::int64_t> mtime_ns;
};

status parse_pax(std::string_view text, pax_values& out) {
  while (!text.empty()) {
    auto space = text.find(' ');
    std::size_t len = 0;
    auto r = std::from_chars(text.data(), text.data() + std::min(space, text.size()), len);
    if (space == std::string_view::npos || r.ec != std::errc{} || r.ptr != text.data() + space || len <= space + 1 ||
        len > text.size() || text[len - 1] != '\n')
      return bad("a pax record is malformed");
    auto record = text.substr(space + 1, len - space - 2);
    text.remove_prefix(len);
    auto eq = record.find('=');
    if (eq == std::string_view::npos) return bad("a pax record has no '='");
    auto key = record.substr(0, eq);
    std::string value(record.substr(eq + 1));
    if (key == "path") out.path = value;
    else if (key == "linkpath") out.linkpath = value;
    else if (key == "size") {
      std::uint64_t v = 0;
      auto s = std::from_chars(value.data(), value.data() + value.size(), v);
      if (value.empty() || s.ec != std::errc{} || s.ptr != value.data() + value.size()) return bad("pax size is not a number");
      out.size = v;
    } else if (key == "mtime") {
      auto t = parse_pax_time(value);
      if (!t) return t.error();
      out.mtime_ns = *t;
    }
    // Other keys (atime, uid, uname, xattrs of another writer) carry nothing a snapshot keeps.
  }
  return ok();
}

} // namespace

std::string tar_header(const tar_entry& e) {
  std::string name = e.type == tar_entry::kind::dir ? e.path + "/" : e.path;
  std::string records = pax_record("path", name);
  if (e.type == tar_entry::kind::symlink) records += pax_record("linkpath", e.link_target);
  std::uint64_t size = e.type == tar_entry::kind::file ? e.size : 0;
  records += pax_record("size", std::to_string(size));
  records += pax_record("mtime", pax_time(e.mtime_ns));
  // The pax header's own ustar name is informative only; readers take the records.
  std::string out = ustar_block('x', "PaxHeaders/" + name.substr(0, 80), "", 0644, records.size(), e.mtime_ns);
  out += records;
  out += tar_padding(records.size());
  char flag = e.type == tar_entry::kind::file ? '0' : e.type == tar_entry::kind::dir ? '5' : '2';
  out += ustar_block(flag, name, e.link_target, e.mode, size, e.mtime_ns);
  return out;
}

std::string tar_padding(std::uint64_t size) {
  return std::string(static_cast<std::size_t>((kTarBlock - size % kTarBlock) % kTarBlock), '\0');
}

std::string tar_end() { return std::string(2 * kTarBlock, '\0'); }

expected<std::optional<tar_entry>> read_tar_header(const tar_source& source) {
  pax_values pax;
  bool have_pax = false;
  for (;;) {
    std::string block(kTarBlock, '\0');
    if (auto s = source(block.data(), kTarBlock); !s) return s.error();
    auto zeros = [](const std::string& b) { return std::all_of(b.begin(), b.end(), [](char c) { return c == '\0'; }); };
    if (zeros(block)) {
      if (have_pax) return bad("the archive ends after a pax header");
      // The end is two zero blocks: read the second too, so nothing of the archive is left.
      if (auto s = source(block.data(), kTarBlock); !s) return s.error();
      if (!zeros(block)) return bad("a zero block stands alone before the archive's end");
      return std::optional<tar_entry>{};
    }
    auto stored = parse_octal(field_text(block, kChecksum, kChecksumLen), "a header's checksum");
    if (!stored) return stored.error();
    if (*stored != checksum(block)) return bad("a header's checksum does not match");
    if (std::memcmp(block.data() + kMagic, "ustar", 5) != 0) return bad("a header is not a ustar header");
    char flag = block[kTypeflag];
    auto size = parse_octal(field_text(block, kSize, kSizeLen), "a header's size");
    if (!size) return size.error();
    if (flag == 'x') {
      if (have_pax) return bad("two pax headers in a row");
      if (*size > kTarMaxPaxHeader) return bad("a pax header is larger than 64 KiB");
      std::string records(static_cast<std::size_t>(*size), '\0');
      std::string pad = tar_padding(*size);
      if (auto s = source(records.data(), records.size()); !s) return s.error();
      if (auto s = source(pad.data(), pad.size()); !s) return s.error();
      if (auto s = parse_pax(records, pax); !s) return s.error();
      have_pax = true;
      continue;
    }
    tar_entry e;
    switch (flag) {
      case '0': case '\0': e.type = tar_entry::kind::file; break;
      case '5': e.type = tar_entry::kind::dir; break;
      case '2': e.type = tar_entry::kind::symlink; break;
      default:
        return bad(std::string("entry type '") + (flag >= 0x20 && flag < 0x7f ? std::string(1, flag) : "?") +
                   "' is not one a snapshot holds (directories, files and symlinks only)");
    }
    if (pax.path) e.path = *pax.path;
    else {
      auto prefix = field_text(block, kPrefix, kPrefixLen);
      e.path = (prefix.empty() ? "" : std::string(prefix) + "/") + std::string(field_text(block, kName, kNameLen));
    }
    while (e.path.size() > 1 && e.path.back() == '/') e.path.pop_back();
    if (auto s = check_path(e.path, "an entry's path"); !s) return s.error();
    auto mode = parse_octal(field_text(block, kMode, kModeLen), "a header's mode");
    if (!mode) return mode.error();
    e.mode = static_cast<std::uint32_t>(*mode & 07777);
    e.size = pax.size.value_or(*size);
    if (e.type != tar_entry::kind::file && e.size != 0) return bad("'" + e.path + "' is not a file but has bytes");
    if (pax.mtime_ns) e.mtime_ns = *pax.mtime_ns;
    else {
      auto m = parse_octal(field_text(block, kMtime, kMtimeLen), "a header's mtime");
      if (!m) return m.error();
      e.mtime_ns = static_cast<std::int64_t>(std::min<std::uint64_t>(*m, 9'000'000'000ULL)) * 1'000'000'000;
    }
    if (e.type == tar_entry::kind::symlink) {
      e.link_target = pax.linkpath ? *pax.linkpath : std::string(field_text(block, kLinkname, kLinknameLen));
      if (e.link_target.empty() || e.link_target.size() > kTarMaxPath || e.link_target.find('\0') != std::string::npos)
        return bad("the symlink '" + e.path + "' has an empty or over-long target");
    }
    return std::optional<tar_entry>{std::move(e)};
  }
}

} // namespace corral
