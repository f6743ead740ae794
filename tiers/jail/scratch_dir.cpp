#include "tiers/jail/scratch_dir.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sys/mount.h>
#include <unistd.h>
#include <vector>

namespace corral {

bool scratch_dir_bounded() { return ::geteuid() == 0; }

expected<std::string> make_scratch_dir(const std::string& parent, const std::string& id, std::uint64_t bytes) {
  std::string tmpl = parent + "/corral-" + id + "-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    return make_failure(failure_kind::internal,
                        "mkdtemp " + tmpl + ": " + std::strerror(errno) + " (is the scratch parent writable?)");
  std::string dir = buf.data();
  if (!scratch_dir_bounded()) return dir;
  std::string options = "mode=0700,size=" + std::to_string(bytes);
  if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) < 0) {
    int err = errno;
    ::rmdir(dir.c_str());
    return make_failure(failure_kind::internal,
                        "mounting a tmpfs of " + std::to_string(bytes) + " bytes on the scratch dir " + dir + ": " +
                            std::strerror(err) +
                            " (a root runtime bounds each scratch dir so; it needs CAP_SYS_ADMIN)");
  }
  return dir;
}

std::error_code remove_scratch_dir(const std::string& dir) {
  if (dir.empty()) return {};
  // EINVAL: not a mount point (an unprivileged runtime's dir, or already unmounted). A
  // tmpfs outlives the runtime that mounted it, so a crashed one's is unmounted here too.
  ::umount2(dir.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return ec;
}

status move_scratch_contents(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (auto& entry : fs::directory_iterator(from, ec)) {
    auto target = fs::path(to) / entry.path().filename();
    fs::rename(entry.path(), target, ec);
    if (ec == std::errc::cross_device_link) {
      ec.clear();
      fs::copy(entry.path(), target, fs::copy_options::recursive, ec);
    }
    if (ec) break;
  }
  remove_scratch_dir(from);
  if (ec) return make_failure(failure_kind::internal, "moving " + from + " into " + to + ": " + ec.message());
  return ok();
}

} // namespace corral
