// A workspace's root seen from the host: every file operation the runtime does on a
// workspace's behalf. The program inside owns the tree and may plant symlinks, FIFOs and
// races, so each path (a relative one from workspace_relative_path) is resolved by the
// kernel with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV) from the
// root's fd: a symlink that leads out (absolute, or `..` past the root) fails to resolve,
// and a directory swapped for a symlink mid-walk cannot move the walk outside.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <utility>
#include <vector>

#include "config/failure.hpp"

namespace corral {

struct file_chunk {
  std::string data;
  bool eof = false;        // data reaches the file's end
  std::uint64_t size = 0;  // the file's size when it was opened
};

struct tree_entry {
  std::string path;  // relative to the root; "." for the root itself
  std::string name;
  std::string type;  // "file", "dir", "symlink", "fifo", "socket", "char", "block"
  std::uint64_t size = 0;
  std::uint32_t mode = 0;  // permission bits (07777)
  std::int64_t mtime_ns = 0;
  std::string symlink_target;  // the link's text, for "symlink" only; never followed
};

struct tree_listing {
  std::vector<tree_entry> entries;  // depth first, names sorted within a directory
  bool truncated = false;           // max_entries was reached
};

// What a write is staged as beside its target before the rename that replaces it (so a
// reader sees the old content or the new): a watcher of the files may skip these.
inline constexpr const char* kWriteTempPrefix = ".corral-write-";

// Bounds that no caller may raise.
inline constexpr unsigned max_list_depth = 16;
inline constexpr unsigned max_remove_depth = 128;  // one open directory per level

class workspace_tree {
public:
  // Opens host_root (a path the runtime trusts) once and checks that this kernel has
  // openat2; without it every operation would be unsafe, so open fails.
  static expected<workspace_tree> open(const std::string& host_root);

  workspace_tree(workspace_tree&& other) noexcept;
  workspace_tree& operator=(workspace_tree&& other) noexcept;
  workspace_tree(const workspace_tree&) = delete;
  workspace_tree& operator=(const workspace_tree&) = delete;
  ~workspace_tree();

  const std::string& host_root() const { return host_root_; }
  // Files and directories this tree creates from now on belong to uid:gid (a root runtime
  // gives them to the jail's user, who could not change them otherwise).
  void give_new_entries_to(uid_t uid, gid_t gid) {
    owner_uid_ = uid;
    owner_gid_ = gid;
  }
  int root_fd() const { return root_; }

  // At most max_bytes (the caller's bound: it is allocated) from offset of a regular file (a symlink to one beneath the root
  // is followed; FIFOs, devices and directories are refused without blocking).
  expected<file_chunk> read(const std::string& rel, std::uint64_t offset, std::uint64_t max_bytes) const;
  // Replaces rel atomically (a temp file in its directory, renamed over it): readers see
  // the old or the new content, and a symlink at rel is replaced, never written through.
  // mode is masked with 0777.
  status write(const std::string& rel, std::string_view data, mode_t mode, bool create_parents) const;
  // Appends in place to a regular file, creating it (0644) if absent; never through a
  // symlink at rel.
  status append(const std::string& rel, std::string_view data) const;
  status make_dir(const std::string& rel, mode_t mode, bool parents) const;
  // recursive: a directory and everything below it, never following a symlink (links are
  // unlinked, not entered); refused past max_remove_depth levels.
  status remove(const std::string& rel, bool recursive) const;
  status move(const std::string& from, const std::string& to) const;
  // lstat semantics: a symlink is reported as one, with its target text.
  expected<tree_entry> stat(const std::string& rel) const;
  // Entries below rel, depth levels deep (1: its children; at most max_list_depth), never
  // descending into a symlink; stops at max_entries with truncated set.
  expected<tree_listing> list(const std::string& rel, unsigned depth, std::size_t max_entries) const;

private:
  workspace_tree(int root, std::string host_root) : root_(root), host_root_(std::move(host_root)) {}

  // After a successful create; a no-op unless give_new_entries_to was called.
  status own_fd(int fd, const std::string& rel) const;
  status own_entry(int dir, const std::string& name, const std::string& rel) const;

  int root_ = -1;
  std::string host_root_;
  uid_t owner_uid_ = static_cast<uid_t>(-1);
  gid_t owner_gid_ = static_cast<gid_t>(-1);
};

} // namespace corral
