// What a workspace's tree holds, entry by entry, and what changed between two such
// manifests ("what did this execution change"). A manifest is taken from the host side
// through workspace_tree's root fd: it never follows a symlink and never opens anything
// but a regular file, so a planted FIFO or a link to /dev/zero cannot stall it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/failure.hpp"
#include "tiers/workspace/hash_cache.hpp"
#include "tiers/workspace/workspace_tree.hpp"

namespace corral {

struct manifest_entry {
  std::string path;  // relative to the root, no leading slash; the root itself is not listed
  char type = 'o';   // 'f' regular file, 'd' directory, 'l' symlink, 'o' anything else
  std::uint32_t mode = 0;   // permission bits (07777)
  std::uint64_t size = 0;   // files: bytes; symlinks: the target's length; others: 0
  std::string sha256;       // lower-case hex, regular files only
  std::string link_target;  // symlinks only
  std::int64_t mtime_ns = 0;

  bool operator==(const manifest_entry&) const = default;
};

// Bound on how deep scan_tree descends (one open directory per level).
inline constexpr unsigned max_scan_depth = 128;

// Every entry below the root, sorted by path (byte order). Fails, naming the bound, when
// the tree holds more than max_entries entries or nests deeper than max_scan_depth.
// With a cache, a file that looks as it did at an earlier scan (hash_cache.hpp) is not read
// again; the caller saves the cache after.
expected<std::vector<manifest_entry>> scan_tree(const workspace_tree& tree, std::size_t max_entries,
                                                hash_cache* cache = nullptr);

struct tree_change {
  enum class kind { added, modified, removed } what = kind::added;
  manifest_entry entry;                  // the new entry; for removed, the old one
  std::optional<manifest_entry> before;  // modified only
};

// "added", "modified" or "removed": the wire's and the tests' word for a change.
const char* to_string(tree_change::kind kind);

// Both manifests sorted by path (as scan_tree and parse_manifest give them). Modified:
// type, mode, size, sha256 or link_target differ; an mtime alone does not count. At most
// max_changes, in path order; truncated says whether more were left out.
std::vector<tree_change> diff_manifests(const std::vector<manifest_entry>& before, const std::vector<manifest_entry>& after,
                                        std::size_t max_changes, bool& truncated);

// A text form that round-trips exactly: a header line, then one line per entry with
// tab-separated fields; bytes of paths and link targets that could break a line
// (controls, space, '%', DEL) are written as %XX, so any byte survives.
std::string serialize_manifest(const std::vector<manifest_entry>& entries);
expected<std::vector<manifest_entry>> parse_manifest(std::string_view text);

} // namespace corral
