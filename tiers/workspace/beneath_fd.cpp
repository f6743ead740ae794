#include "tiers/workspace/beneath_fd.hpp"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace corral {

owned_fd& owned_fd::operator=(owned_fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

owned_fd::~owned_fd() {
  if (fd_ >= 0) ::close(fd_);
}

int open_beneath(int dir, const std::string& path, std::uint64_t flags, link_policy links, std::uint64_t mode) {
  open_how how{};
  how.flags = flags | O_CLOEXEC;
  how.mode = mode;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  if (links == link_policy::no_links) how.resolve |= RESOLVE_NO_SYMLINKS;
  // glibc 2.36 has no openat2 wrapper. EAGAIN: a rename raced a `..` step of a symlink's
  // target and the kernel asks to retry rather than risk a wrong answer; bounded, since
  // the program inside can keep renaming.
  for (int attempt = 0;; ++attempt) {
    long fd = ::syscall(SYS_openat2, dir, path.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN || attempt == 64) return static_cast<int>(fd);
  }
}

expected<std::vector<std::string>> directory_names(int dir, std::size_t limit, bool& more) {
  more = false;
  int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return make_failure(failure_kind::internal, std::string("opening a directory to list it: ") + std::strerror(errno));
  DIR* d = ::fdopendir(fd);
  if (!d) {
    int err = errno;
    ::close(fd);
    return make_failure(failure_kind::internal, std::string("fdopendir: ") + std::strerror(err));
  }
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    dirent* e = ::readdir(d);
    if (!e) break;
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (names.size() == limit) {
      more = true;
      break;
    }
    names.emplace_back(e->d_name);
  }
  int err = errno;
  ::closedir(d);
  if (err != 0) return make_failure(failure_kind::internal, std::string("readdir: ") + std::strerror(err));
  return names;
}

const char* file_type_name(unsigned st_mode) {
  switch (st_mode & S_IFMT) {
    case S_IFREG: return "file";
    case S_IFDIR: return "dir";
    case S_IFLNK: return "symlink";
    case S_IFIFO: return "fifo";
    case S_IFSOCK: return "socket";
    case S_IFCHR: return "char";
    case S_IFBLK: return "block";
  }
  return "unknown";
}

} // namespace corral
