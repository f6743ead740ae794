#include "tiers/exec_helper/seccomp_build/seccomp_rules.hpp"

#include <cerrno>
#include <cstring>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <seccomp.h>

namespace corral::seccomp_build {

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

bool fail(int rc, const std::string& what, std::string& error) {
  error = what + ": " + std::strerror(-rc);
  return false;
}

bool add_rules(scmp_filter_ctx ctx, std::uint32_t deny, std::string& error) {
  for (const char* name : kDenied) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not a syscall on this architecture
    if (int rc = seccomp_rule_add(ctx, deny, nr, 0); rc < 0) return fail(rc, name, error);
  }
  for (auto flag : kNamespaceFlags)
    if (int rc = seccomp_rule_add(ctx, deny, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)); rc < 0)
      return fail(rc, "clone", error);
  // clone3 passes its flags in memory, where a filter cannot look: ENOSYS makes libc fall
  // back to clone, whose flags are checked above.
  if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0); rc < 0)
    return fail(rc, "clone3", error);
  // ioctl's request is an int: compare the low 32 bits only.
  for (unsigned long request : {static_cast<unsigned long>(TIOCSTI), static_cast<unsigned long>(TIOCLINUX)})
    if (int rc = seccomp_rule_add(ctx, deny, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, request));
        rc < 0)
      return fail(rc, "ioctl", error);
  // Another process's rlimits: the jail's init runs as the same uid as the program, and
  // must not have its limits lowered under it. prlimit64(0, …) (setrlimit) stays allowed.
  if (int rc = seccomp_rule_add(ctx, deny, SCMP_SYS(prlimit64), 1, SCMP_A0(SCMP_CMP_NE, 0)); rc < 0)
    return fail(rc, "prlimit64", error);
  // libseccomp compares an argument once per rule, so the query personality(0xffffffff),
  // which has every bit set, is denied too; no runtime we support calls it.
  for (auto bit : kPersonalityBits)
    if (int rc = seccomp_rule_add(ctx, deny, SCMP_SYS(personality), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit));
        rc < 0)
      return fail(rc, "personality", error);
  for (int family = 0; family < AF_MAX; ++family) {
    bool allowed = false;
    for (int f : kAllowedFamilies) allowed = allowed || f == family;
    if (allowed) continue;
    if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                                  SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family)));
        rc < 0)
      return fail(rc, "socket", error);
  }
  if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                                SCMP_A0(SCMP_CMP_GE, static_cast<scmp_datum_t>(AF_MAX)));
      rc < 0)
    return fail(rc, "socket", error);
  return true;
}

constexpr int kInetFamilies[] = {AF_INET, AF_INET6};
// Every inet socket type but SOCK_STREAM (compared without SOCK_NONBLOCK/SOCK_CLOEXEC).
constexpr int kNonStreamTypes[] = {SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET, SOCK_DCCP, SOCK_PACKET};
constexpr scmp_datum_t kSocketTypeMask = 0xf;
constexpr scmp_datum_t kMsgFastOpen = 0x20000000;  // MSG_FASTOPEN

bool add_contained_rules(scmp_filter_ctx ctx, std::uint32_t deny, seccomp_variant variant, std::string& error) {
  // The host's unix sockets (a daemon's, docker.sock, D-Bus) are reachable by path: no
  // mount namespace hides them and Landlock ABI <= 7 does not govern connecting to them.
  for (int family : {AF_UNIX, AF_NETLINK})
    if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
                                  SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family)));
        rc < 0)
      return fail(rc, "socket", error);
  if (variant == seccomp_variant::contained_open) return true;
  // An unbound socket's listen binds a port without the bind Landlock checks.
  if (int rc = seccomp_rule_add(ctx, deny, SCMP_SYS(listen), 0); rc < 0) return fail(rc, "listen", error);
  if (variant == seccomp_variant::contained_closed) {
    // No network: no inet socket at all, on any Landlock ABI.
    for (int family : kInetFamilies)
      if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
                                    SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family)));
          rc < 0)
        return fail(rc, "socket", error);
    return true;
  }
  for (int family : kInetFamilies) {
    for (int type : kNonStreamTypes)
      if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 2,
                                    SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family)),
                                    SCMP_A1(SCMP_CMP_MASKED_EQ, kSocketTypeMask, static_cast<scmp_datum_t>(type)));
          rc < 0)
        return fail(rc, "socket type", error);
    // A stream socket of another protocol than TCP (0 picks TCP): SCTP, MPTCP.
    if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 2,
                                  SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family)),
                                  SCMP_A2(SCMP_CMP_GT, static_cast<scmp_datum_t>(IPPROTO_TCP)));
        rc < 0)
      return fail(rc, "socket protocol", error);
  }
  if (int rc = seccomp_rule_add(ctx, deny, SCMP_SYS(sendto), 1, SCMP_A3(SCMP_CMP_MASKED_EQ, kMsgFastOpen, kMsgFastOpen));
      rc < 0)
    return fail(rc, "sendto", error);
  for (int nr : {SCMP_SYS(sendmsg), SCMP_SYS(sendmmsg)}) {
    int flags_arg = nr == SCMP_SYS(sendmsg) ? 2 : 3;
    scmp_arg_cmp cmp{static_cast<unsigned int>(flags_arg), SCMP_CMP_MASKED_EQ, kMsgFastOpen, kMsgFastOpen};
    if (int rc = seccomp_rule_add(ctx, deny, nr, 1, cmp); rc < 0) return fail(rc, "sendmsg", error);
  }
  if (int rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0); rc < 0) return fail(rc, "connect", error);
  return true;
}

} // namespace

std::string program_name(bool kill, seccomp_variant variant) {
  const char* which = variant == seccomp_variant::contained_open     ? "ContainedOpen"
                      : variant == seccomp_variant::contained_closed ? "ContainedClosed"
                      : variant == seccomp_variant::contained_brokered ? "ContainedBrokered"
                                                                       : "";
  return std::string("kSeccomp") + which + (kill ? "Kill" : "Errno");
}

std::vector<sock_filter> compile_filter(bool kill, seccomp_variant variant, std::string& error) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return error = "seccomp_init failed", std::vector<sock_filter>{};
  std::vector<sock_filter> program;
  std::uint32_t deny = kill ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_ERRNO(EPERM);
  if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0) {
    fail(rc, "bad-architecture action", error);
  } else if (add_rules(ctx, deny, error) &&
             (variant == seccomp_variant::jail || add_contained_rules(ctx, deny, variant, error))) {
    int fd = ::memfd_create("corral-seccomp", MFD_CLOEXEC);
    std::string bytes;
    int rc2 = fd < 0 ? -errno : seccomp_export_bpf(ctx, fd);
    if (rc2 == 0 && ::lseek(fd, 0, SEEK_SET) == 0) {
      char buf[4096];
      ssize_t n;
      while ((n = ::read(fd, buf, sizeof buf)) > 0) bytes.append(buf, static_cast<std::size_t>(n));
    }
    if (fd >= 0) ::close(fd);
    if (rc2 < 0) {
      fail(rc2, "seccomp_export_bpf", error);
    } else if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0 ||
               bytes.size() / sizeof(sock_filter) > BPF_MAXINSNS) {
      error = "the exported filter is not a BPF program";
    } else {
      program.resize(bytes.size() / sizeof(sock_filter));
      std::memcpy(program.data(), bytes.data(), bytes.size());
    }
  }
  seccomp_release(ctx);
  return program;
}

} // namespace corral::seccomp_build
