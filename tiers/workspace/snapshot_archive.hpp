// A workspace's files as one compressed archive (pax tar in a zstd frame), and back. The
// writer reads the tree from the host side through its root fd with no link followed; the
// reader builds a new tree entry by entry beneath an empty root (never a path on the
// host's view, never the kernel's tar or archive_write_disk): parents must be directories
// it made, nothing is created twice, nothing is followed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "config/failure.hpp"
#include "tiers/workspace/change_manifest.hpp"
#include "tiers/workspace/workspace_tree.hpp"
#include "tiers/workspace/zstd_stream.hpp"

namespace corral {

// What an archive holds. Modes keep the permission and sticky bits; setuid and setgid
// are dropped (a workspace's program cannot use them: no_new_privs), as are owners (all
// of it belongs to the workspace's user) and xattrs.
struct archive_summary {
  std::size_t entries = 0;
  std::uint64_t content_bytes = 0;    // the files' bytes, before compression
  std::vector<std::string> skipped;   // FIFOs, sockets, devices: not kept
  compressed_file file;               // the archive's size and digest
};

// `manifest` is the tree as scan_tree saw it while nothing could change it; a file that
// no longer matches it fails the archive ("changed while it was archived").
expected<archive_summary> write_archive(const workspace_tree& tree, const std::vector<manifest_entry>& manifest, int fd);

struct extract_bounds {
  std::size_t max_entries = 1'000'000;
  std::uint64_t max_bytes = UINT64_MAX;  // the files' bytes together
  uid_t owner_uid = static_cast<uid_t>(-1);  // -1: the runtime's own
  gid_t owner_gid = static_cast<gid_t>(-1);
};

// Builds, beneath `root_fd` (an empty directory), what the archive on `fd` holds; the
// number of entries made. A failure leaves what was made so far for the caller to remove.
expected<std::size_t> extract_archive(int fd, int root_fd, const extract_bounds& bounds);

} // namespace corral
