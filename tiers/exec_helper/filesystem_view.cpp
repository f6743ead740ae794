#include "tiers/exec_helper/filesystem_view.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <linux/mount.h>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tiers/exec_helper/status_writer.hpp"

namespace corral::helper {

namespace {

constexpr const char* kBase = "/tmp";
constexpr const char* kNewRoot = "/newroot";
constexpr const char* kOldRoot = "/oldroot";

int fail(const std::string& what) {
  int err = errno ? errno : EINVAL;
  report_failed(err, "mount", what + ": " + std::strerror(err));
  return err;
}

// mount_setattr (Linux 5.12) changes a whole bind tree at once; a plain remount would
// leave submounts of a read-only bind writable.
int set_attrs(const std::string& path, std::uint64_t attrs, bool recursive) {
  mount_attr attr{};
  attr.attr_set = attrs;
  if (::syscall(SYS_mount_setattr, AT_FDCWD, path.c_str(), recursive ? AT_RECURSIVE : 0, &attr,
                sizeof attr) < 0)
    return fail("mount_setattr " + path);
  return 0;
}

// mkdir -p below the new root; a component that is a symlink is refused, so content of a
// bind mount cannot redirect a later mount point onto another path.
int make_dirs(const std::string& path) {
  std::string sofar;
  std::size_t pos = 1;
  while (pos <= path.size()) {
    auto next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    sofar = path.substr(0, next);
    pos = next + 1;
    if (sofar.empty()) continue;
    struct stat st {};
    if (::lstat(sofar.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode)) {
        errno = ELOOP;
        return fail("mount point " + path + " passes through the symlink " + sofar);
      }
      if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return fail("mount point " + path);
      }
      continue;
    }
    if (::mkdir(sofar.c_str(), 0755) < 0 && errno != EEXIST) return fail("mkdir " + sofar);
  }
  return 0;
}

int make_file(const std::string& path) {
  auto slash = path.rfind('/');
  if (int err = make_dirs(path.substr(0, slash))) return err;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return fail("create mount point " + path);
  ::close(fd);
  return 0;
}

// `tree`: a detached idmapped copy of the source (idmapped_roots.hpp) to attach instead
// of a plain bind, or -1.
int bind(const std::string& source, const std::string& target, std::uint64_t attrs, int tree = -1) {
  std::string from = std::string(kOldRoot) + source;
  std::string to = std::string(kNewRoot) + target;
  struct stat st {};
  if (::lstat(from.c_str(), &st) < 0) return fail("bind source " + source);
  if (S_ISLNK(st.st_mode)) {
    // Merged-/usr systems have /bin -> usr/bin: recreate the link, so it resolves inside
    // the view exactly as on the host.
    char link[PATH_MAX];
    ssize_t n = ::readlink(from.c_str(), link, sizeof link - 1);
    if (n < 0) return fail("readlink " + source);
    link[n] = '\0';
    auto slash = to.rfind('/');
    if (int err = make_dirs(to.substr(0, slash))) return err;
    if (::symlink(link, to.c_str()) < 0) return fail("symlink " + target);
    return 0;
  }
  int err = S_ISDIR(st.st_mode) ? make_dirs(to) : make_file(to);
  if (err) return err;
  if (tree >= 0) {
    if (::syscall(SYS_move_mount, tree, "", AT_FDCWD, to.c_str(), MOVE_MOUNT_F_EMPTY_PATH) < 0)
      return fail("attach the idmapped " + source + " at " + target);
  } else if (::mount(from.c_str(), to.c_str(), nullptr, MS_BIND | MS_REC, nullptr) < 0) {
    return fail("bind " + source + " at " + target);
  }
  return set_attrs(to, attrs, true);
}

int tmpfs(const std::string& target, std::uint64_t size_bytes, const char* mode) {
  std::string to = std::string(kNewRoot) + target;
  if (int err = make_dirs(to)) return err;
  std::string options = std::string("mode=") + mode;
  if (size_bytes) options += ",size=" + std::to_string(size_bytes);
  if (::mount("tmpfs", to.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) < 0)
    return fail("tmpfs at " + target);
  return 0;
}

int proc(const std::string& target) {
  std::string to = std::string(kNewRoot) + target;
  if (int err = make_dirs(to)) return err;
  // This process is pid 1 of the new pid namespace: the proc shows only the jail's.
  if (::mount("proc", to.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) < 0)
    return fail("proc at " + target);
  return 0;
}

// Device nodes cannot be created in a user namespace: bind the host's few harmless ones.
// `shm_bytes` bounds its /dev/shm (0: the kernel's default, half of RAM).
int dev(const std::string& target, std::uint64_t shm_bytes) {
  if (int err = tmpfs(target, 1 << 20, "0755")) return err;
  for (const char* node : {"null", "zero", "full", "random", "urandom", "tty"}) {
    std::string name = target + "/" + node;
    // Without nodev, or the nodes would not open; nothing else is executable or suid.
    if (int err = bind(std::string("/dev/") + node, name, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)) return err;
  }
  std::string root = std::string(kNewRoot) + target;
  if (int err = make_dirs(root + "/pts")) return err;
  // A private devpts instance: the jail's ptys are its own, not the host's.
  if (::mount("devpts", (root + "/pts").c_str(), "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=0620") < 0)
    return fail("devpts at " + target + "/pts");
  if (int err = tmpfs(target + "/shm", shm_bytes, "1777")) return err;
  struct {
    const char* link;
    const char* to;
  } links[] = {{"/ptmx", "pts/ptmx"},         {"/fd", "/proc/self/fd"},
               {"/stdin", "/proc/self/fd/0"}, {"/stdout", "/proc/self/fd/1"},
               {"/stderr", "/proc/self/fd/2"}};
  for (auto& l : links)
    if (::symlink(l.to, (root + l.link).c_str()) < 0) return fail("symlink " + target + l.link);
  return 0;
}

// An empty read-only file or directory over a path a bound root shows: what a mask hides
// cannot be read, written, renamed or removed (a mount point is busy). The target must
// already be there, and not as a symlink, so the mask never creates anything in a host
// directory nor lands elsewhere.
int hide(const std::string& target) {
  std::string to = std::string(kNewRoot) + target;
  struct stat st {};
  if (::lstat(to.c_str(), &st) < 0) return fail("masked path " + target);
  if (S_ISLNK(st.st_mode)) {
    errno = ELOOP;
    return fail("masked path " + target + " became a symlink");
  }
  if (S_ISDIR(st.st_mode)) {
    if (::mount("tmpfs", to.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=000,size=4k") < 0)
      return fail("mask " + target);
    return 0;
  }
  // The base tmpfs (this process's root until the final pivot) holds the empty file.
  const char* empty = "/masked-file";
  int fd = ::open(empty, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0);
  if (fd < 0) return fail("create the empty file for masks");
  ::close(fd);
  if (::mount(empty, to.c_str(), nullptr, MS_BIND, nullptr) < 0) return fail("mask " + target);
  return set_attrs(to, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, false);
}

int apply(const mount_entry& m, int tree) {
  if (m.optional && (m.kind == mount_kind::ro_bind || m.kind == mount_kind::rw_bind || m.kind == mount_kind::hidden)) {
    struct stat st {};
    if (::lstat((std::string(kOldRoot) + m.source).c_str(), &st) < 0) return 0;
  }
  switch (m.kind) {
    case mount_kind::ro_bind:
      return bind(m.source, m.target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    case mount_kind::rw_bind: return bind(m.source, m.target, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, tree);
    case mount_kind::tmpfs: return tmpfs(m.target, m.size_bytes, "1777");
    case mount_kind::proc: return proc(m.target);
    case mount_kind::dev: return dev(m.target, m.size_bytes);
    case mount_kind::hidden: return hide(m.target);
  }
  errno = EINVAL;
  return fail("unknown mount kind");
}

int pivot(const char* new_root, const char* put_old) {
  return static_cast<int>(::syscall(SYS_pivot_root, new_root, put_old));
}

} // namespace

int build_filesystem_view(const jail_spec& spec, const std::vector<int>& trees) {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) < 0) return fail("make / a slave");
  if (::mount("tmpfs", kBase, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=1m") < 0)
    return fail("tmpfs base");
  if (::mkdir((std::string(kBase) + kOldRoot).c_str(), 0700) < 0) return fail("mkdir oldroot");
  if (::mkdir((std::string(kBase) + kNewRoot).c_str(), 0755) < 0) return fail("mkdir newroot");
  if (pivot(kBase, (std::string(kBase) + kOldRoot).c_str()) < 0) return fail("pivot_root to the base");
  if (::chdir("/") < 0) return fail("chdir /");
  if (::mount("tmpfs", kNewRoot, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m") < 0)
    return fail("tmpfs root");

  for (std::size_t i = 0; i < spec.mounts.size(); ++i)
    if (int err = apply(spec.mounts[i], i < trees.size() ? trees[i] : -1)) return err;

  if (::umount2(kOldRoot, MNT_DETACH) < 0) return fail("detach the host's tree");
  if (::chdir(kNewRoot) < 0) return fail("chdir newroot");
  // pivot_root(".", ".") stacks the old root under the new one; detaching "." drops it.
  if (pivot(".", ".") < 0) return fail("pivot_root into the new root");
  if (::umount2(".", MNT_DETACH) < 0) return fail("detach the base");
  if (::chdir("/") < 0) return fail("chdir /");
  return set_attrs("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, false);
}

} // namespace corral::helper
