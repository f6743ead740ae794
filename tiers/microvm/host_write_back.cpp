#include "tiers/microvm/host_write_back.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace corral {

namespace {

// glibc 2.36 has no openat2 wrapper.
int open_beneath(int dir, const std::string& path, std::uint64_t flags, std::uint64_t mode = 0) {
  open_how how{};
  how.flags = flags | O_CLOEXEC;
  how.mode = mode;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  for (;;) {
    long fd = ::syscall(SYS_openat2, dir, path.c_str(), &how, sizeof how);
    if (fd < 0 && errno == EAGAIN) continue;  // a concurrent rename: the kernel asks to retry
    return static_cast<int>(fd);
  }
}

failure refused(const std::string& host, const guest_file& e, const std::string& why) {
  return failure{failure_kind::refused, "the guest's " + std::string(e.kind == entry_kind::directory ? "directory" : "file") +
                                            " '" + e.path + "' was not written back to " + host + ": " + why};
}

} // namespace

expected<host_write_back> host_write_back::open(const std::vector<host_tree>& trees, std::uint64_t byte_cap) {
  host_write_back w;
  w.byte_cap_ = byte_cap;
  for (auto& t : trees) {
    int fd = -1;
    if (t.writable) {
      fd = ::open(t.host.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) return make_failure(failure_kind::spawn_failed, "cannot open the output root " + t.host + ": " + std::strerror(errno));
    }
    w.roots_.push_back(fd);
    w.hosts_.push_back(t.host);
  }
  return w;
}

host_write_back::host_write_back(host_write_back&& o) noexcept { *this = std::move(o); }

host_write_back& host_write_back::operator=(host_write_back&& o) noexcept {
  if (this != &o) {
    close_all();
    roots_ = std::move(o.roots_);
    hosts_ = std::move(o.hosts_);
    byte_cap_ = o.byte_cap_;
    bytes_ = o.bytes_;
    o.roots_.clear();
  }
  return *this;
}

host_write_back::~host_write_back() { close_all(); }

void host_write_back::close_all() {
  for (int fd : roots_)
    if (fd >= 0) ::close(fd);
  roots_.clear();
}

expected<int> host_write_back::open_parent(const guest_file& e, std::string& name) const {
  if (e.tree >= roots_.size())
    return make_failure(failure_kind::refused, "the guest named tree " + std::to_string(e.tree) + ", which does not exist");
  const std::string& host = hosts_[e.tree];
  if (roots_[e.tree] < 0) return refused(host, e, "that tree is read-only");
  if (!safe_relative_path(e.path)) return refused(host, e, "not a plain relative path");
  auto slash = e.path.rfind('/');
  name = slash == std::string::npos ? e.path : e.path.substr(slash + 1);
  std::string parent = slash == std::string::npos ? "." : e.path.substr(0, slash);
  int fd = open_beneath(roots_[e.tree], parent, O_PATH | O_DIRECTORY);
  if (fd < 0) return refused(host, e, "its directory cannot be opened beneath the root without following a link (" +
                                          std::string(std::strerror(errno)) + ")");
  return fd;
}

status host_write_back::write(const guest_file& e) {
  std::string name;
  auto parent = open_parent(e, name);
  if (!parent) return parent.error();
  const std::string& host = hosts_[e.tree];
  if (e.kind == entry_kind::symlink) {
    ::close(*parent);
    return refused(host, e, "symlinks are not copied back");
  }
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } parent_closer{*parent};

  if (e.kind == entry_kind::directory) {
    if (::mkdirat(*parent, name.c_str(), (e.mode & 0777) | 0700) < 0) {
      struct stat st {};
      if (errno != EEXIST || ::fstatat(*parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
        return refused(host, e, std::strerror(errno == EEXIST ? EEXIST : errno));
    }
    return ok();
  }
  if (e.content.size() > byte_cap_ - std::min(bytes_, byte_cap_))
    return refused(host, e, "the guest sent more than the " + std::to_string(byte_cap_ >> 20) +
                                " MiB the VM could hold");
  bytes_ += e.content.size();
  std::uint64_t flags = O_WRONLY | O_CREAT | O_NOFOLLOW | (e.offset == 0 ? O_TRUNC : 0);
  int fd = open_beneath(*parent, name, flags, e.mode & 0777);
  if (fd < 0) return refused(host, e, std::strerror(errno));
  closer file_closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) return refused(host, e, "the host entry is not a regular file");
  if (e.offset == 0 && ::fchmod(fd, e.mode & 0777) < 0) return refused(host, e, std::strerror(errno));
  std::size_t done = 0;
  while (done < e.content.size()) {
    ssize_t n = ::pwrite(fd, e.content.data() + done, e.content.size() - done, static_cast<off_t>(e.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return refused(host, e, std::strerror(n < 0 ? errno : EIO));
    done += static_cast<std::size_t>(n);
  }
  return ok();
}

status host_write_back::remove(const guest_file& e) {
  std::string name;
  auto parent = open_parent(e, name);
  if (!parent) return parent.error();
  int rc = ::unlinkat(*parent, name.c_str(), e.kind == entry_kind::directory ? AT_REMOVEDIR : 0);
  int err = errno;
  ::close(*parent);
  if (rc < 0 && err != ENOENT) return refused(hosts_[e.tree], e, std::string("removing it: ") + std::strerror(err));
  return ok();
}

} // namespace corral
