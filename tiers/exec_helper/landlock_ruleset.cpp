#include "tiers/exec_helper/landlock_ruleset.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tiers/exec_helper/status_writer.hpp"

namespace corral::helper {

namespace {

// The uapi values, spelled out: Debian 12's kernel headers predate ABI 4-6, and the
// kernel, not the headers, decides what is enforced.
constexpr std::uint64_t kExecute = 1ull << 0, kWriteFile = 1ull << 1, kReadFile = 1ull << 2,
                        kReadDir = 1ull << 3, kRemoveDir = 1ull << 4, kRemoveFile = 1ull << 5,
                        kMakeChar = 1ull << 6, kMakeDir = 1ull << 7, kMakeReg = 1ull << 8,
                        kMakeSock = 1ull << 9, kMakeFifo = 1ull << 10, kMakeBlock = 1ull << 11,
                        kMakeSym = 1ull << 12, kRefer = 1ull << 13, kTruncate = 1ull << 14,
                        kIoctlDev = 1ull << 15;
constexpr std::uint64_t kNetBindTcp = 1ull << 0, kNetConnectTcp = 1ull << 1;
constexpr std::uint64_t kScopeAbstractUnix = 1ull << 0, kScopeSignal = 1ull << 1;
constexpr int kRulePathBeneath = 1, kRuleNetPort = 2;
constexpr std::uint32_t kCreateRulesetVersion = 1u << 0;

// The three fields of ABI 6; the kernel reads as much as it knows (copy_struct_from_user)
// and zeros past that are accepted by older kernels.
struct ruleset_attr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};

struct __attribute__((packed)) net_port_attr {
  std::uint64_t allowed_access;
  std::uint64_t port;
};

struct __attribute__((packed)) path_beneath_attr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};

std::uint64_t fs_rights_for_abi(int abi) {
  std::uint64_t r = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile |
                    kMakeChar | kMakeDir | kMakeReg | kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) r |= kRefer;
  if (abi >= 3) r |= kTruncate;
  if (abi >= 5) r |= kIoctlDev;
  return r;
}

// Rights that make sense on a file (the kernel rejects directory rights on a non-directory).
constexpr std::uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

int fail(int err, const std::string& what) {
  report_failed(err, "landlock", what + ": " + std::strerror(err));
  return err;
}

int add_rule(int ruleset, const std::string& path, std::uint64_t rights, std::uint64_t handled) {
  int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return fail(errno, "open " + path + " for a rule");
  struct stat st {};
  if (::fstat(fd, &st) < 0) {
    int err = errno;
    ::close(fd);
    return fail(err, "stat " + path);
  }
  if (!S_ISDIR(st.st_mode)) rights &= kFileRights;
  path_beneath_attr attr{rights & handled, fd};
  long rc = ::syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &attr, 0);
  int err = errno;
  ::close(fd);
  if (rc < 0) return fail(err, "landlock_add_rule " + path);
  return 0;
}

} // namespace

int prepare_landlock(const jail_spec& spec, prepared_ruleset& out) {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (abi < 0) return fail(errno, "this kernel has no usable Landlock");
  if (abi < static_cast<long>(spec.landlock_abi_floor)) {
    report_failed(EPERM, "landlock",
                  "kernel Landlock ABI " + std::to_string(abi) + " is below the configured floor " +
                      std::to_string(spec.landlock_abi_floor) + "; refusing to run weaker");
    return EPERM;
  }
  out.abi = static_cast<int>(abi);
  ruleset_attr attr{};
  attr.handled_access_fs = fs_rights_for_abi(out.abi);
  if (spec.landlock_deny_tcp && out.abi >= 4) attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
  if (spec.landlock_scope && out.abi >= 6) attr.scoped = kScopeAbstractUnix | kScopeSignal;
  std::size_t size = out.abi >= 6 ? sizeof attr : out.abi >= 4 ? 16 : 8;
  long fd = ::syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (fd < 0) return fail(errno, "landlock_create_ruleset");
  out.fd = static_cast<int>(fd);
  ::fcntl(out.fd, F_SETFD, FD_CLOEXEC);
  // The root itself may only be listed; everything usable is granted by a rule below it.
  // Not in the contained tier: its root is the host's, and listing is granted beneath.
  if (spec.mode != jail_mode::contained)
    if (int err = add_rule(out.fd, "/", kReadDir, attr.handled_access_fs)) return err;
  for (auto& rule : spec.landlock_rules) {
    std::uint64_t rights = rule.list_only  ? kReadDir
                           : rule.writable ? attr.handled_access_fs
                                           : (kReadFile | kReadDir | kExecute);
    if (int err = add_rule(out.fd, rule.path, rights, attr.handled_access_fs)) return err;
  }
  // The egress proxies' ports on the jail's loopback are the only TCP the program may
  // connect to (tiers/exec_helper/egress_listeners.hpp). Not so in the contained tier:
  // Landlock cannot tell the host's loopback from any other address with the same port, so
  // no connect is allowed and the helper's broker makes the proxy connections.
  if (attr.handled_access_net && spec.mode != jail_mode::contained)
    for (auto port : spec.egress_ports) {
      net_port_attr np{kNetConnectTcp, port};
      if (::syscall(SYS_landlock_add_rule, out.fd, kRuleNetPort, &np, 0) < 0)
        return fail(errno, "landlock_add_rule connect to port " + std::to_string(port));
    }
  return 0;
}

int restrict_self(prepared_ruleset& ruleset) {
  long rc = ::syscall(SYS_landlock_restrict_self, ruleset.fd, 0);
  int err = errno;
  ::close(ruleset.fd);
  ruleset.fd = -1;
  if (rc < 0) return fail(err, "landlock_restrict_self");
  return 0;
}

} // namespace corral::helper
