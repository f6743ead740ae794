// The few fd-level steps workspace_tree and change_manifest share: an owned descriptor,
// openat2 confined beneath a directory, and a bounded read of a directory's names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/failure.hpp"

namespace corral {

class owned_fd {
public:
  owned_fd() = default;
  explicit owned_fd(int fd) : fd_(fd) {}
  owned_fd(owned_fd&& o) noexcept : fd_(o.release()) {}
  owned_fd& operator=(owned_fd&& o) noexcept;
  owned_fd(const owned_fd&) = delete;
  owned_fd& operator=(const owned_fd&) = delete;
  ~owned_fd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

private:
  int fd_ = -1;
};

// How far a lookup may go. `follow_inside` lets symlinks resolve as long as they stay
// beneath `dir`; `no_links` refuses any symlink on the way (ELOOP), for walks that must
// never leave the directory they list.
enum class link_policy { follow_inside, no_links };

// openat2(dir, path, flags | O_CLOEXEC) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
// RESOLVE_NO_XDEV (plus RESOLVE_NO_SYMLINKS for no_links). -1 with errno on failure,
// ENOSYS where the kernel has no openat2 (never a fallback to openat).
int open_beneath(int dir, const std::string& path, std::uint64_t flags, link_policy links,
                 std::uint64_t mode = 0);

// The names in a directory (without . and ..), at most `limit`; `more` says whether
// there were others. names_for(bound, taken) is the limit that still tells "over the bound". Read through a fresh description of `dir` (which may be O_PATH).
expected<std::vector<std::string>> directory_names(int dir, std::size_t limit, bool& more);

inline std::size_t names_for(std::size_t bound, std::size_t taken) {
  std::size_t left = bound > taken ? bound - taken : 0;
  return left == static_cast<std::size_t>(-1) ? left : left + 1;
}

// "file", "dir", "symlink", "fifo", "socket", "char", "block" for an st_mode.
const char* file_type_name(unsigned st_mode);

} // namespace corral
