// A snapshot's record on disk (<workspaces dir>/snapshots/<id>/meta.json) beside its
// archive (archive.tar.zst): whose it is, what it was taken from, and the archive's digest,
// which every restore checks before it reads a byte of the archive.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/failure.hpp"

namespace corral {

inline constexpr int kSnapshotRecordVersion = 1;

struct snapshot_record {
  std::string id;           // "s-" + 12 hex digits; also the directory's name
  std::string owner;        // the principal whose workspace it was taken from
  std::string source;       // that workspace's id
  std::string source_name;  // and its name then ("" if none)
  std::int64_t created_at = 0;  // unix seconds
  std::string digest;           // "sha256:" + hex, of archive.tar.zst
  std::uint64_t bytes = 0;      // archive.tar.zst's size
  std::uint64_t entries = 0;    // directories, files and symlinks in it
  std::uint64_t content_bytes = 0;  // the files' bytes, uncompressed
  std::vector<std::string> skipped;  // FIFOs, sockets and devices not kept
};

std::string snapshot_json(const snapshot_record& r);
expected<snapshot_record> parse_snapshot(std::string_view text);

// <dir>/meta.json, atomically and synced.
status write_snapshot_record(const std::string& dir, const snapshot_record& r);
expected<snapshot_record> read_snapshot_record(const std::string& dir);

bool valid_snapshot_id(std::string_view id);
std::string new_snapshot_id();

} // namespace corral
