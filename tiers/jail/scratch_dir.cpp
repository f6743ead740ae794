#include "tiers/jail/scratch_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/mount.h>
#include <unistd.h>
#include <vector>

#include "config/write_all.hpp"

namespace corral {

bool scratch_dir_bounded() { return ::geteuid() == 0; }

namespace {

std::error_code unmount_and_remove(const std::string& dir) {
  if (dir.empty()) return {};
  // EINVAL: not a mount point (an unprivileged runtime's dir, or already unmounted). A
  // tmpfs outlives the runtime that mounted it, so a crashed one's is unmounted here too.
  ::umount2(dir.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return ec;
}

} // namespace

expected<std::shared_ptr<scratch_dir_owner>> scratch_dir_owner::make(const std::string& parent, const std::string& id,
                                                                     std::uint64_t bytes) {
  std::string tmpl = parent + "/corral-" + id + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    return make_failure(failure_kind::internal,
                        "mkdtemp " + tmpl + ": " + std::strerror(errno) + " (is the scratch parent writable?)");
  std::string dir = buf.data();
  auto owned = std::shared_ptr<scratch_dir_owner>(new scratch_dir_owner(dir));
  if (!scratch_dir_bounded()) return owned;
  std::string options = "mode=0700,size=" + std::to_string(bytes);
  if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) < 0) {
    int err = errno;
    owned->remove();
    return make_failure(failure_kind::internal,
                        "mounting a tmpfs of " + std::to_string(bytes) + " bytes on the scratch dir " + dir + ": " +
                            std::strerror(err) +
                            " (a root runtime bounds each scratch dir so; it needs CAP_SYS_ADMIN)");
  }
  return owned;
}

scratch_dir_owner::~scratch_dir_owner() { remove(); }

std::error_code scratch_dir_owner::remove() {
  if (removed_.exchange(true)) return {};
  return unmount_and_remove(path_);
}

std::error_code remove_orphaned_scratch_dir(const std::string& dir) { return unmount_and_remove(dir); }

status scratch_dir_owner::write_file(const std::string& name, const std::string& content) const {
  // 0644 inside a 0700 dir: only the execution reads it, and a jail running as another
  // uid than the runtime's (root maps to nobody) still can.
  auto path = path_ + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return make_failure(failure_kind::internal, "open " + path + ": " + std::strerror(errno));
  if (!write_all(fd, content)) {
    int e = errno;
    ::close(fd);
    return make_failure(failure_kind::internal, "write " + path + ": " + std::strerror(e));
  }
  ::close(fd);
  return ok();
}

} // namespace corral
