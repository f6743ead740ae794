#include "tiers/exec_helper/seccomp_filter.hpp"

#include <cerrno>
#include <cstring>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tiers/exec_helper/status_writer.hpp"

namespace corral::helper {

namespace {

const char* const kDenied[] = {
    // namespaces, mounts and the filesystem view
    "unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount",
    "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    // other processes' memory and tracing
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "process_madvise",
    // kernel keyrings
    "keyctl", "add_key", "request_key",
    // modules, kexec, reboot, swap, accounting, kernel log
    "init_module", "finit_module", "delete_module", "create_module", "kexec_load",
    "kexec_file_load", "reboot", "swapon", "swapoff", "acct", "syslog",
    // large or historically buggy attack surface
    "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open",
    "userfaultfd", "fanotify_init", "lookup_dcookie", "quotactl", "quotactl_fd",
    "open_by_handle_at", "name_to_handle_at", "nfsservctl", "uselib", "ustat", "sysfs",
    "_sysctl", "iopl", "ioperm", "vhangup", "get_kernel_syms", "query_module",
    // the clock is the host's
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
};

constexpr unsigned long kNamespaceFlags[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS,
                                             CLONE_NEWIPC, CLONE_NEWUSER,   CLONE_NEWPID,
                                             CLONE_NEWNET, 0x00000080 /* CLONE_NEWTIME */};

// Personality bits that weaken the address space (no ASLR, executable data, page 0).
constexpr unsigned long kPersonalityBits[] = {ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO,
                                              ADDR_COMPAT_LAYOUT, ADDR_LIMIT_32BIT, ADDR_LIMIT_3GB};

constexpr int kAllowedFamilies[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};

bool fail(scmp_filter_ctx ctx, int rc, const std::string& what) {
  report_failed(-rc, "seccomp", what + ": " + std::strerror(-rc));
  seccomp_release(ctx);
  return false;
}

bool add_rules(scmp_filter_ctx ctx, std::uint32_t deny) {
  for (const char* name : kDenied) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not a syscall on this architecture
    if (int rc = seccomp_rule_add(ctx, deny, nr, 0); rc < 0) return fail(ctx, rc, name);
  }
  for (auto flag : kNamespaceFlags)
    if (int rc = seccomp_rule_add(ctx, deny, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)); rc < 0)
      return fail(ctx, rc, "clone");
  // clone3 passes its flags in memory, where a filter cannot look: ENOSYS makes libc fall
  // back to clone, whose flags are checked above.
  if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0); rc < 0)
    return fail(ctx, rc, "clone3");
  // ioctl's request is an int: compare the low 32 bits only.
  for (unsigned long request : {static_cast<unsigned long>(TIOCSTI), static_cast<unsigned long>(TIOCLINUX)})
    if (int rc = seccomp_rule_add(ctx, deny, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, request));
        rc < 0)
      return fail(ctx, rc, "ioctl");
  // Another process's rlimits: the jail's init runs as the same uid as the program, and
  // must not have its limits lowered under it. prlimit64(0, …) (setrlimit) stays allowed.
  if (int rc = seccomp_rule_add(ctx, deny, SCMP_SYS(prlimit64), 1, SCMP_A0(SCMP_CMP_NE, 0)); rc < 0)
    return fail(ctx, rc, "prlimit64");
  // libseccomp compares an argument once per rule, so the query personality(0xffffffff),
  // which has every bit set, is denied too; no runtime we support calls it.
  for (auto bit : kPersonalityBits)
    if (int rc = seccomp_rule_add(ctx, deny, SCMP_SYS(personality), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit));
        rc < 0)
      return fail(ctx, rc, "personality");
  for (int family = 0; family < AF_MAX; ++family) {
    bool allowed = false;
    for (int f : kAllowedFamilies) allowed = allowed || f == family;
    if (allowed) continue;
    if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                                  SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family)));
        rc < 0)
      return fail(ctx, rc, "socket");
  }
  if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                                SCMP_A0(SCMP_CMP_GE, static_cast<scmp_datum_t>(AF_MAX)));
      rc < 0)
    return fail(ctx, rc, "socket");
  return true;
}

} // namespace

scmp_filter_ctx build_seccomp_filter(const jail_spec& spec) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) {
    report_failed(ENOMEM, "seccomp", "seccomp_init failed");
    return nullptr;
  }
  if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0) {
    fail(ctx, rc, "bad-architecture action");
    return nullptr;
  }
  std::uint32_t deny = spec.seccomp_kill ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_ERRNO(EPERM);
  if (!add_rules(ctx, deny)) return nullptr;
  return ctx;
}

int compile_seccomp_filter(scmp_filter_ctx filter, compiled_filter& out) {
  int fd = ::memfd_create("corral-seccomp", MFD_CLOEXEC);
  if (fd < 0) {
    report_failed(errno, "seccomp", std::string("memfd_create: ") + std::strerror(errno));
    return errno;
  }
  int rc = seccomp_export_bpf(filter, fd);
  std::string bytes;
  if (rc == 0 && ::lseek(fd, 0, SEEK_SET) == 0) {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) bytes.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (rc < 0) {
    report_failed(-rc, "seccomp", std::string("seccomp_export_bpf: ") + std::strerror(-rc));
    return -rc;
  }
  if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0 || bytes.size() / sizeof(sock_filter) > BPF_MAXINSNS) {
    report_failed(EINVAL, "seccomp", "the exported filter is not a BPF program");
    return EINVAL;
  }
  out.program.resize(bytes.size() / sizeof(sock_filter));
  std::memcpy(out.program.data(), bytes.data(), bytes.size());
  return 0;
}

int install_seccomp_filter(const compiled_filter& filter) {
  sock_fprog prog{static_cast<unsigned short>(filter.program.size()),
                  const_cast<sock_filter*>(filter.program.data())};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
    report_failed(errno, "seccomp", std::string("seccomp(SECCOMP_SET_MODE_FILTER): ") + std::strerror(errno));
    return errno;
  }
  return 0;
}

} // namespace corral::helper
