#include "tiers/jail/idmapped_mount.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace corral {

namespace {

std::string why(const std::string& what) { return what + ": " + std::strerror(errno); }

bool write_map(const std::string& path, const std::string& text, std::string& error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return error = why("open " + path), false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!ok) error = why("write '" + text + "' to " + path);
  ::close(fd);
  return ok;
}

} // namespace

int open_idmap_userns(std::uint32_t owner_uid, std::uint32_t owner_gid, std::uint32_t program_uid,
                      std::uint32_t program_gid, std::string& error) {
  int hold[2];
  if (::pipe2(hold, O_CLOEXEC) < 0) return error = why("pipe2"), -1;
  // The child only keeps the namespace alive until its fd is open: raw calls only.
  long pid = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
  if (pid < 0) {
    error = why("clone a user namespace");
    ::close(hold[0]);
    ::close(hold[1]);
    return -1;
  }
  if (pid == 0) {
    char c;
    ::syscall(SYS_close, hold[1]);
    ::syscall(SYS_read, hold[0], &c, 1);
    ::syscall(SYS_exit_group, 0);
  }
  ::close(hold[0]);
  auto base = "/proc/" + std::to_string(pid);
  int fd = -1;
  if (write_map(base + "/uid_map", std::to_string(owner_uid) + " " + std::to_string(program_uid) + " 1\n", error) &&
      write_map(base + "/gid_map", std::to_string(owner_gid) + " " + std::to_string(program_gid) + " 1\n", error)) {
    fd = ::open((base + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) error = why("open " + base + "/ns/user");
  }
  ::close(hold[1]);
  int status = 0;
  while (::waitpid(static_cast<pid_t>(pid), &status, 0) < 0 && errno == EINTR) {}
  return fd;
}

int open_idmapped_tree(const std::string& path, int userns_fd, std::string& error) {
  int tree = static_cast<int>(
      ::syscall(SYS_open_tree, AT_FDCWD, path.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
  if (tree < 0) return error = why("open_tree " + path), -1;
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_IDMAP;
  attr.userns_fd = static_cast<std::uint64_t>(userns_fd);
  if (::syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0) {
    error = why("mount_setattr MOUNT_ATTR_IDMAP on " + path) +
            (errno == EINVAL ? " (its filesystem does not support idmapped mounts)" : "");
    ::close(tree);
    return -1;
  }
  return tree;
}

std::string idmapped_mount_problem(const std::string& dir) {
  if (::geteuid() != 0)
    return "an unprivileged runtime cannot idmap the host's filesystems (it needs CAP_SYS_ADMIN there); "
           "it maps the jail to the caller's own uid instead, so the caller's roots are written as the caller";
  struct stat st {};
  if (::stat(dir.c_str(), &st) < 0) return why("stat " + dir);
  std::string error;
  int ns = open_idmap_userns(st.st_uid, st.st_gid, 65534, 65534, error);
  if (ns < 0) return error;
  int tree = open_idmapped_tree(dir, ns, error);
  ::close(ns);
  if (tree < 0) return error;
  ::close(tree);
  return "";
}

} // namespace corral
