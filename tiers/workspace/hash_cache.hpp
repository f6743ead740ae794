// What a file's SHA-256 was when it last looked the same: keyed by (dev, ino, size, ctime,
// mtime), so a scan hashes only what changed since the last one. ctime is the kernel's (no
// program can set it) and moves on every write, chmod and rename. A file whose ctime is
// within `racy_margin` of the scan's start may still be written in the same clock tick
// without its ctime moving (git's "racy clean" case): its digest is used for this scan but
// never remembered, so the next scan hashes it again.
//
// Kept beside a workspace's files (<workspace dir>/hashcache), outside what its programs
// can reach; advisory: a missing or damaged file only costs a full hash.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unordered_map>

namespace corral {

class hash_cache {
public:
  static constexpr std::chrono::milliseconds kDefaultRacyMargin{2000};

  // Reads `path` (nothing there: an empty cache); the scan starts now.
  explicit hash_cache(std::string path, std::chrono::nanoseconds racy_margin = kDefaultRacyMargin);

  // The digest remembered for a regular file that still looks as it did.
  std::optional<std::string> lookup(const struct stat& st);
  // Remembers a digest just computed (unless the file is too new to trust).
  void store(const struct stat& st, const std::string& sha256);
  // Writes what this scan used and stored (entries of files gone are dropped), atomically;
  // nothing when nothing changed.
  void save() const;

  std::size_t hits() const { return hits_; }
  std::size_t hashed() const { return stored_; }

private:
  struct key {
    std::uint64_t dev, ino, size;
    std::int64_t ctime_ns, mtime_ns;
    bool operator==(const key&) const = default;
  };
  struct key_hash {
    std::size_t operator()(const key& k) const { return std::hash<std::uint64_t>()(k.ino * 1000003 ^ k.dev ^ k.size); }
  };
  static key key_of(const struct stat& st);

  std::string path_;
  std::int64_t trust_before_ns_;  // ctime at or after this: racy
  std::unordered_map<key, std::string, key_hash> loaded_, kept_;
  std::size_t hits_ = 0, stored_ = 0;
  bool changed_ = false;
};

} // namespace corral
