// The POSIX pax archive format (tar with extended headers), in the subset a workspace
// snapshot holds: directories, regular files and symlinks. Every entry carries a pax header
// with its exact path, link target, size and mtime in nanoseconds, so no name is cut and no
// time rounded; GNU tar and bsdtar read the archives. Pure: bytes in and out, no file is
// touched here (tiers/workspace/snapshot_archive.hpp walks and builds trees).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "config/failure.hpp"

namespace corral {

inline constexpr std::size_t kTarBlock = 512;
// Bounds a reader holds an archive to, whoever wrote it.
inline constexpr std::size_t kTarMaxPath = 4096;
inline constexpr std::size_t kTarMaxPaxHeader = 64 * 1024;

struct tar_entry {
  enum class kind : std::uint8_t { file, dir, symlink };
  kind type = kind::file;
  std::string path;         // relative, '/'-separated, no trailing slash
  std::string link_target;  // symlinks: the link's text, verbatim
  std::uint32_t mode = 0;   // permission bits (07777)
  std::uint64_t size = 0;   // files only: the bytes that follow the header
  std::int64_t mtime_ns = 0;
};

// An entry's header blocks: a pax extended header and its records, then the ustar header.
// A file's bytes follow it, then tar_padding(size).
std::string tar_header(const tar_entry& e);
// The zeros that bring `size` bytes to a whole block.
std::string tar_padding(std::uint64_t size);
// The end of an archive: two zero blocks.
std::string tar_end();

// Fills the buffer with exactly n bytes of the archive, or fails (a short archive fails).
using tar_source = std::function<status(char* buffer, std::size_t n)>;

// The next entry's header (nullopt after reading both end-of-archive blocks). The caller then reads
// its size bytes and their padding from the same source. Refuses what a snapshot never
// holds (hardlinks, devices, FIFOs, GNU long-name records), a bad checksum, a path that is
// absolute, climbs with "..", has empty components or is longer than kTarMaxPath.
expected<std::optional<tar_entry>> read_tar_header(const tar_source& source);

} // namespace corral
