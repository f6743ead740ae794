#include "tiers/workspace/change_manifest.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

#include "config/sha256.hpp"
#include "tiers/workspace/beneath_fd.hpp"

namespace corral {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

failure scan_failure(const std::string& path, const std::string& why) {
  return make_failure(failure_kind::internal, "scanning the workspace at '" + path + "': " + why);
}

expected<std::string> sha256_of(int fd, const std::string& path) {
  auto hex = sha256_of_descriptor(fd);
  if (hex.empty())
    return scan_failure(path, errno != 0 ? std::string("reading it to hash: ") + std::strerror(errno) : "EVP sha256 failed");
  return hex;
}

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

struct scanner {
  std::size_t max_entries;
  hash_cache* cache;
  std::vector<manifest_entry> out;

  failure too_many() const {
    return make_failure(failure_kind::limit_exceeded, "the workspace holds more than " + std::to_string(max_entries) +
                                                          " entries (max_tree_entries): no manifest was taken");
  }

  // One entry as it is now; nullopt when it vanished. A regular file is hashed through
  // a descriptor opened with no link allowed and checked by fstat, so an entry swapped for
  // a FIFO or a symlink between lstat and open is looked at again, never read.
  expected<std::optional<manifest_entry>> describe(int dir, const std::string& name, const std::string& path) const {
    constexpr int attempts = 4;
    for (int attempt = 0; attempt < attempts; ++attempt) {
      struct stat st {};
      if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno == ENOENT) return std::optional<manifest_entry>{};
        return scan_failure(path, std::string("lstat: ") + std::strerror(errno));
      }
      manifest_entry e;
      e.path = path;
      if (S_ISREG(st.st_mode) && cache) {
        if (auto known = cache->lookup(st)) {
          e.type = 'f';
          e.size = static_cast<std::uint64_t>(st.st_size);
          e.sha256 = std::move(*known);
          e.mode = st.st_mode & 07777;
          e.mtime_ns = mtime_ns(st);
          return std::optional<manifest_entry>{std::move(e)};
        }
      }
      if (S_ISREG(st.st_mode)) {
        owned_fd fd(open_beneath(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, link_policy::no_links));
        if (!fd.valid()) {
          if (errno == ENOENT) return std::optional<manifest_entry>{};
          if (errno == ELOOP || errno == ENXIO || errno == ENOTDIR) continue;
          return scan_failure(path, std::string("opening it to hash: ") + std::strerror(errno));
        }
        if (::fstat(fd.get(), &st) < 0) return scan_failure(path, std::string("fstat: ") + std::strerror(errno));
        if (!S_ISREG(st.st_mode)) continue;
        auto digest = sha256_of(fd.get(), path);
        if (!digest) return digest.error();
        if (cache) cache->store(st, *digest);
        e.type = 'f';
        e.size = static_cast<std::uint64_t>(st.st_size);
        e.sha256 = std::move(*digest);
      } else if (S_ISDIR(st.st_mode)) {
        e.type = 'd';  // size 0: a directory's st_size moves with its entries, which are listed anyway
      } else if (S_ISLNK(st.st_mode)) {
        std::string target(PATH_MAX, '\0');
        ssize_t n = ::readlinkat(dir, name.c_str(), target.data(), target.size());
        if (n < 0) {
          if (errno == ENOENT) return std::optional<manifest_entry>{};
          if (errno == EINVAL) continue;  // no longer a link
          return scan_failure(path, std::string("readlink: ") + std::strerror(errno));
        }
        target.resize(static_cast<std::size_t>(n));
        e.type = 'l';
        e.size = target.size();
        e.link_target = std::move(target);
      } else {
        e.type = 'o';
      }
      e.mode = st.st_mode & 07777;
      e.mtime_ns = mtime_ns(st);
      return std::optional<manifest_entry>{std::move(e)};
    }
    return scan_failure(path, "it kept changing type while it was scanned");
  }

  status walk(int dir, const std::string& prefix, unsigned depth) {
    if (depth >= max_scan_depth)
      return make_failure(failure_kind::limit_exceeded, "the workspace nests deeper than " + std::to_string(max_scan_depth) +
                                                            " levels at '" + prefix + "' (max_scan_depth): no manifest was taken");
    bool more = false;
    auto names = directory_names(dir, names_for(max_entries, out.size()), more);
    if (!names) return scan_failure(prefix.empty() ? "." : prefix, names.error().message);
    if (more) return too_many();
    for (auto& name : *names) {
      std::string path = prefix.empty() ? name : prefix + "/" + name;
      auto entry = describe(dir, name, path);
      if (!entry) return entry.error();
      if (!*entry) continue;
      if (out.size() == max_entries) return too_many();
      bool is_dir = (*entry)->type == 'd';
      out.push_back(std::move(**entry));
      if (!is_dir) continue;
      // No link on the way down: a directory swapped for a symlink is not entered.
      owned_fd child(open_beneath(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, link_policy::no_links));
      if (!child.valid()) continue;
      if (auto deeper = walk(child.get(), path, depth + 1); !deeper) return deeper;
    }
    return ok();
  }
};

} // namespace

expected<std::vector<manifest_entry>> scan_tree(const workspace_tree& tree, std::size_t max_entries, hash_cache* cache) {
  scanner s{max_entries, cache, {}};
  if (auto walked = s.walk(tree.root_fd(), "", 0); !walked) return walked.error();
  std::sort(s.out.begin(), s.out.end(), [](const manifest_entry& a, const manifest_entry& b) { return a.path < b.path; });
  return std::move(s.out);
}

const char* to_string(tree_change::kind kind) {
  switch (kind) {
    case tree_change::kind::added: return "added";
    case tree_change::kind::modified: return "modified";
    case tree_change::kind::removed: return "removed";
  }
  return "modified";
}

std::vector<tree_change> diff_manifests(const std::vector<manifest_entry>& before, const std::vector<manifest_entry>& after,
                                        std::size_t max_changes, bool& truncated) {
  truncated = false;
  std::vector<tree_change> changes;
  auto add = [&](tree_change c) {
    if (changes.size() == max_changes) {
      truncated = true;
      return false;
    }
    changes.push_back(std::move(c));
    return true;
  };
  auto differs = [](const manifest_entry& a, const manifest_entry& b) {
    return a.type != b.type || a.mode != b.mode || a.size != b.size || a.sha256 != b.sha256 || a.link_target != b.link_target;
  };
  std::size_t i = 0, j = 0;
  while (i < before.size() || j < after.size()) {
    bool ok_to_go = true;
    if (j == after.size() || (i < before.size() && before[i].path < after[j].path)) {
      ok_to_go = add({tree_change::kind::removed, before[i++], std::nullopt});
    } else if (i == before.size() || after[j].path < before[i].path) {
      ok_to_go = add({tree_change::kind::added, after[j++], std::nullopt});
    } else {
      if (differs(before[i], after[j])) ok_to_go = add({tree_change::kind::modified, after[j], before[i]});
      ++i;
      ++j;
    }
    if (!ok_to_go) break;
  }
  return changes;
}

// --- the text form ------------------------------------------------------------------------

namespace {

constexpr std::string_view manifest_header = "corral-manifest 1\n";

bool needs_escape(unsigned char c) { return c <= 0x20 || c == '%' || c == 0x7f; }

void append_escaped(std::string& out, std::string_view bytes) {
  for (char ch : bytes) {
    auto c = static_cast<unsigned char>(ch);
    if (needs_escape(c)) {
      out += '%';
      out += hex_digits[c >> 4];
      out += hex_digits[c & 15];
    } else {
      out += ch;
    }
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Strict: only the escapes serialize writes, so one text has one meaning.
std::optional<std::string> unescape(std::string_view field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    auto c = static_cast<unsigned char>(field[i]);
    if (c != '%') {
      if (needs_escape(c)) return std::nullopt;
      out += field[i];
      continue;
    }
    if (i + 2 >= field.size()) return std::nullopt;
    int hi = hex_value(field[i + 1]), lo = hex_value(field[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    auto decoded = static_cast<unsigned char>(hi * 16 + lo);
    if (!needs_escape(decoded)) return std::nullopt;
    out += static_cast<char>(decoded);
    i += 2;
  }
  return out;
}

template <class Number>
bool parse_number(std::string_view field, Number& value, int base = 10) {
  if (field.empty()) return false;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value, base);
  return ec == std::errc{} && end == field.data() + field.size();
}

bool is_sha256_hex(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return hex_value(c) >= 0; });
}

} // namespace

std::string serialize_manifest(const std::vector<manifest_entry>& entries) {
  std::string out(manifest_header);
  char number[32];
  for (auto& e : entries) {
    out += e.type;
    out += '\t';
    auto mode_end = std::to_chars(number, number + sizeof number, e.mode, 8).ptr;
    out.append(number, mode_end);
    out += '\t';
    out += std::to_string(e.size);
    out += '\t';
    out += std::to_string(e.mtime_ns);
    out += '\t';
    out += e.sha256;
    out += '\t';
    append_escaped(out, e.path);
    out += '\t';
    append_escaped(out, e.link_target);
    out += '\n';
  }
  return out;
}

expected<std::vector<manifest_entry>> parse_manifest(std::string_view text) {
  if (text.substr(0, manifest_header.size()) != manifest_header)
    return make_failure(failure_kind::internal, "the manifest does not start with '" +
                                                    std::string(manifest_header.substr(0, manifest_header.size() - 1)) + "'");
  std::vector<manifest_entry> entries;
  std::size_t pos = manifest_header.size();
  std::size_t line_number = 1;
  while (pos < text.size()) {
    ++line_number;
    auto bad = [&](const std::string& why) {
      return make_failure(failure_kind::internal, "manifest line " + std::to_string(line_number) + ": " + why);
    };
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) return bad("the last line has no newline (a torn write?)");
    auto line = text.substr(pos, end - pos);
    pos = end + 1;
    std::string_view fields[7];
    std::size_t count = 0, start = 0;
    for (;;) {
      auto tab = line.find('\t', start);
      if (count == 7) return bad("more than 7 fields");
      fields[count++] = line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start);
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    if (count != 7) return bad("fewer than 7 fields");
    manifest_entry e;
    if (fields[0].size() != 1 || std::string_view("fdlo").find(fields[0][0]) == std::string_view::npos)
      return bad("unknown type '" + std::string(fields[0]) + "'");
    e.type = fields[0][0];
    if (!parse_number(fields[1], e.mode, 8) || e.mode > 07777) return bad("bad mode");
    if (!parse_number(fields[2], e.size)) return bad("bad size");
    if (!parse_number(fields[3], e.mtime_ns)) return bad("bad mtime");
    e.sha256 = std::string(fields[4]);
    if (e.type == 'f' ? !is_sha256_hex(e.sha256) : !e.sha256.empty()) return bad("a sha256 where it does not belong, or a bad one");
    auto path = unescape(fields[5]);
    auto target = unescape(fields[6]);
    if (!path || !target) return bad("a bad %XX escape or an unescaped byte");
    if (path->empty()) return bad("an empty path");
    if ((e.type == 'l') == target->empty()) return bad("a symlink without a target, or a target on something else");
    e.path = std::move(*path);
    e.link_target = std::move(*target);
    if (!entries.empty() && !(entries.back().path < e.path)) return bad("paths out of order or repeated");
    entries.push_back(std::move(e));
  }
  return entries;
}

} // namespace corral
