#include "tiers/exec_helper/user_namespace.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <string>
#include <unistd.h>

#include "tiers/exec_helper/status_writer.hpp"

namespace corral::helper {

namespace {

int write_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    report_failed(err, "userns", "open " + path + ": " + std::strerror(err));
    return err;
  }
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = n == static_cast<ssize_t>(text.size()) ? 0 : (n < 0 ? errno : EIO);
  ::close(fd);
  if (err) report_failed(err, "userns", "write '" + text + "' to " + path + ": " + std::strerror(err));
  return err;
}

} // namespace

int write_id_maps(pid_t child, const jail_spec& spec) {
  auto base = "/proc/" + std::to_string(child);
  // "deny" first: an unprivileged writer may not map a gid otherwise, and the jail must
  // never regain groups through setgroups().
  if (int err = write_file(base + "/setgroups", "deny")) return err;
  // A root helper also maps root to root: the jail's init builds the filesystem view with
  // the host's permissions (mkdir needs a mapped fsuid; root's 0700 scratch parent must stay
  // traversable). The target drops to the single unprivileged id before exec, and its mounts
  // are nosuid under no_new_privs, so it can never become that root again.
  std::string uids, gids;
  if (::geteuid() == 0 && spec.uid_inside != 0 && spec.gid_inside != 0) {
    uids = "0 0 1\n";
    gids = "0 0 1\n";
  }
  uids += std::to_string(spec.uid_inside) + " " + std::to_string(spec.uid_outside) + " 1\n";
  gids += std::to_string(spec.gid_inside) + " " + std::to_string(spec.gid_outside) + " 1\n";
  if (int err = write_file(base + "/uid_map", uids)) return err;
  return write_file(base + "/gid_map", gids);
}

int drop_supplementary_groups() {
  if (::geteuid() != 0) return 0;  // cannot, and an unprivileged caller's groups are its own
  if (::setgroups(0, nullptr) < 0) {
    int err = errno;
    report_failed(err, "groups", std::string("setgroups(0): ") + std::strerror(err));
    return err;
  }
  return 0;
}

} // namespace corral::helper
