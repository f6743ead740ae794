// corral_bench_floor: what the kernel allows here for a cold boundary, with no runtime
// around it. It does what every namespace sandbox must do and nothing more: clone into new
// user, mount, pid, network, ipc, uts and cgroup namespaces, write the id maps, build a view
// (the system dirs bound read-only, a fresh /proc, /dev/null, a tmpfs /tmp), pivot into it
// and exec the program. No seccomp, no Landlock, no cgroup, no init to reap: a floor, not a
// sandbox. scripts/bench prints corral and its peers next to it.
// Usage: corral_bench_floor PROGRAM [ARGS...]   (exits with the program's status)
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "corral_bench_floor: %s: %s\n", what, std::strerror(errno));
  _exit(125);
}

void write_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) die(path.c_str());
  ::close(fd);
}

// Bound read-only, keeping the flags a user namespace may not drop from the source mount.
void bind_read_only(const char* source, const std::string& target) {
  if (::mkdir(target.c_str(), 0755) < 0 && errno != EEXIST) die(target.c_str());
  if (::mount(source, target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) < 0) die(source);
  struct statvfs sv {};
  if (::statvfs(source, &sv) < 0) die(source);
  unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY;
  if (sv.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (sv.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (sv.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (::mount(nullptr, target.c_str(), nullptr, flags, nullptr) < 0) die(target.c_str());
}

// /bin, /lib, /lib64, /sbin: a symlink into /usr where the host has one (merged /usr), a
// read-only bind where it has a directory.
void top_level(const char* dir, const std::string& root) {
  char link[256];
  ssize_t n = ::readlink(dir, link, sizeof link - 1);
  if (n > 0) {
    link[n] = '\0';
    if (::symlink(link, (root + dir).c_str()) < 0) die(dir);
    return;
  }
  struct stat st {};
  if (::stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) bind_read_only(dir, root + dir);
}

[[noreturn]] void enter_view_and_exec(int go, char** program) {
  char byte;
  if (::read(go, &byte, 1) != 1) die("waiting for the id maps");
  ::close(go);
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0) die("making / private");
  const std::string root = "/tmp";  // a tmpfs mounted over it, in this mount namespace only
  if (::mount("tmpfs", root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0) die("tmpfs root");
  bind_read_only("/usr", root + "/usr");
  bind_read_only("/etc", root + "/etc");
  for (const char* dir : {"/bin", "/lib", "/lib64", "/sbin"}) top_level(dir, root);
  if (::mkdir((root + "/proc").c_str(), 0555) < 0) die("mkdir proc");
  if (::mount("proc", (root + "/proc").c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) < 0) die("proc");
  if (::mkdir((root + "/dev").c_str(), 0755) < 0) die("mkdir dev");
  int null_file = ::open((root + "/dev/null").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
  if (null_file < 0) die("/dev/null");
  ::close(null_file);
  if (::mount("/dev/null", (root + "/dev/null").c_str(), nullptr, MS_BIND, nullptr) < 0) die("bind /dev/null");
  if (::mkdir((root + "/tmp").c_str(), 01777) < 0) die("mkdir tmp");
  if (::mount("tmpfs", (root + "/tmp").c_str(), "tmpfs", MS_NOSUID | MS_NODEV, nullptr) < 0) die("tmpfs /tmp");
  if (::chdir(root.c_str()) < 0) die("chdir");
  if (::syscall(SYS_pivot_root, ".", ".") < 0) die("pivot_root");
  if (::umount2(".", MNT_DETACH) < 0) die("detaching the old root");
  if (::chdir("/") < 0) die("chdir /");
  ::execv(program[0], program);
  die(program[0]);
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: corral_bench_floor PROGRAM [ARGS...]\n");
    return 2;
  }
  int go[2];
  if (::pipe2(go, O_CLOEXEC) < 0) die("pipe");
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  pid_t child = static_cast<pid_t>(::syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
                                                        CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | SIGCHLD,
                                             nullptr, nullptr, nullptr, nullptr));
  if (child < 0) die("clone");
  if (child == 0) {
    ::close(go[1]);
    enter_view_and_exec(go[0], argv + 1);
  }
  ::close(go[0]);
  const std::string proc = "/proc/" + std::to_string(child);
  write_file(proc + "/setgroups", "deny");
  write_file(proc + "/uid_map", "0 " + std::to_string(uid) + " 1\n");
  write_file(proc + "/gid_map", "0 " + std::to_string(gid) + " 1\n");
  if (::write(go[1], "g", 1) != 1) die("releasing the child");
  ::close(go[1]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0)
    if (errno != EINTR) die("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
