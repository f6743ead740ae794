// The per-execution scratch dir (the jail's /work, every tier's working directory): made
// here, bounded here, removed here, by its one owner.
//
// The bound is a tmpfs of the profile's scratch_size mounted on the dir, chosen over
// RLIMIT_FSIZE: RLIMIT_FSIZE bounds one file (a thousand smaller files pass, and it also
// bounds output roots and pipes), where a tmpfs bounds the sum and fails the write with
// ENOSPC. It also keeps a filler off the host's disk: tmpfs pages are memory, charged to the
// memory cgroup of the writer (the execution's), so the memory limit bounds them too. A
// tmpfs (rather than a mount inside the jail) because a compiled language's two steps run in
// two jails and share the dir, and the runtime writes the source file into it first.
// Mounting needs root in the initial namespaces; an unprivileged runtime gets a plain dir
// (results say `scratch_size` is not enforced).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

#include "config/failure.hpp"

namespace corral {

// True when scratch dirs are bounded with a tmpfs.
bool scratch_dir_bounded();

// The one owner of a scratch dir: it makes it, and it alone removes it, at the first of
// `remove()` (the execution's or session's way out, where tests expect nothing left) or its
// destruction (a path that forgot, or an actor that crashed). Shared because plans travel in
// CAF messages, which copy; the last copy's destruction is the fallback.
class scratch_dir_owner {
 public:
  // mkdtemp(parent/corral-<id>-XXXXXX), mode 0700, then the tmpfs of `bytes` where allowed.
  static expected<std::shared_ptr<scratch_dir_owner>> make(const std::string& parent, const std::string& id,
                                                           std::uint64_t bytes);
  ~scratch_dir_owner();
  scratch_dir_owner(const scratch_dir_owner&) = delete;
  scratch_dir_owner& operator=(const scratch_dir_owner&) = delete;

  const std::string& path() const { return path_; }

  // Unmounts its tmpfs (if any) and removes the dir and everything in it; once. Callers on
  // an execution's way out ignore the error (a leftover is the start-up sweep's).
  std::error_code remove();

  // Writes `content` to the new file `name` in the dir (mode 0644: a jail that runs as
  // another uid than the runtime's still reads it); refuses one that exists.
  status write_file(const std::string& name, const std::string& content) const;

 private:
  explicit scratch_dir_owner(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::atomic<bool> removed_{false};
};

// The start-up sweep's removal of a scratch dir whose runtime is gone (no owner is alive).
std::error_code remove_orphaned_scratch_dir(const std::string& dir);

} // namespace corral
