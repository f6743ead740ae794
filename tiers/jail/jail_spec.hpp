// The jail spec: everything the exec helper (corral-exec) needs to start one program
// inside a boundary. The runtime builds it from the tier's launch plan and writes it to
// the helper's fd 3; the helper applies it in a fixed order and reports on fd 4.
//
// The spec is declared policy only: the helper never reads corral.toml or decides
// anything itself, so the spec alone says what a child was allowed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/failure.hpp"

namespace corral {

// File descriptors of the helper protocol.
inline constexpr int kSpecFd = 3;    // helper reads the serialized spec, then EOF
inline constexpr int kStatusFd = 4;  // helper writes status lines (see status_line.hpp)

enum class jail_mode : std::uint8_t {
  host = 0,  // subreaper + own session only: the development tier
  jail = 1,  // namespaces, filesystem view, cgroup, rlimits, Landlock, seccomp
  // A workspace's holder: the whole jail built once, whose init then only reaps what the
  // workspace's executions leave behind (actors/workspaces/workspace_holder.hpp).
  hold = 2,
  // A step in a workspace: no namespaces or view of its own; it joins the holder's
  // (`enter_pid`), then confines itself as a jail's init does and starts its program.
  enter = 3,
  // The contained tier (tiers/contained/): no namespaces, no mounts, no cgroup. The helper
  // stays outside as the subreaper; only the target confines itself (rlimits, its own uid
  // when the runtime is root, no capabilities, no_new_privs, the Landlock domain on host
  // paths, the seccomp filter of `seccomp`) before its exec.
  contained = 4,
};

// Which compiled seccomp filter the target loads (tiers/exec_helper/seccomp_build/).
enum class seccomp_variant : std::uint8_t {
  jail = 0,  // the landlock tier's: the jail's own network namespace does the rest
  // The contained tier's: no new unix or netlink sockets (the host's are reachable without
  // a mount namespace); with the network closed, also no inet socket but TCP (Landlock ABI
  // 4-7 governs TCP only), no listen and no TCP Fast Open (a connect in a send).
  contained_open = 1,    // network granted: unix and netlink only
  contained_closed = 2,  // no network
  // The egress allow-list: as closed, and every connect goes to the helper's broker
  // (seccomp user notification), which connects to the egress proxy itself.
  contained_brokered = 3,
};

enum class mount_kind : std::uint8_t {
  ro_bind = 0,  // bind source at target, read-only
  rw_bind = 1,  // bind source at target, writable
  tmpfs = 2,    // a fresh tmpfs at target (size in `size_bytes`)
  proc = 3,     // /proc of the new pid namespace
  dev = 4,      // a minimal /dev: null zero full random urandom tty, pts, shm (size in `size_bytes`)
  // An empty read-only file or directory over target, which a bound root already shows;
  // `source` is the host path it hides (skipped when that is gone). A mask: the mount,
  // not Landlock, refuses here, since Landlock rules only ever add rights beneath a path.
  hidden = 5,
};

struct mount_entry {
  mount_kind kind = mount_kind::ro_bind;
  std::string source;  // host path (binds only)
  std::string target;  // path inside the jail
  std::uint64_t size_bytes = 0;
  bool optional = false;  // skip when the source does not exist (e.g. /lib64, a vanished mask)
  // rw_bind only: an idmapped bind (tiers/jail/idmapped_mount.hpp) on which files owned by
  // owner_uid/gid belong to the program, and what it writes belongs to them on the host.
  bool idmapped = false;
  std::uint32_t owner_uid = 0;
  std::uint32_t owner_gid = 0;
};

struct rlimit_entry {
  int resource = 0;
  std::uint64_t soft = 0;
  std::uint64_t hard = 0;
};

struct landlock_rule {
  std::string path;
  bool writable = false;  // false: read and execute only
  // Listing only (a directory above a protected path in the contained tier, which has no
  // mount to cover the path: tiers/contained/split_grants.hpp).
  bool list_only = false;
};

struct jail_spec {
  jail_mode mode = jail_mode::host;

  // The program, already resolved to an absolute path (inside the jail's view).
  std::string program;
  std::vector<std::string> argv;
  std::vector<std::string> envp;  // "KEY=value", the child's whole environment
  std::string cwd;

  // SIGTERM, then SIGKILL after this grace, for the target and all descendants.
  std::uint32_t kill_grace_ms = 200;
  // Make stdin (a pty slave) the controlling terminal of the target's new session.
  bool controlling_tty = false;

  // Host mode: commands the helper runs, in order, after the target and every descendant
  // are gone (an external runtime's state outside the process tree), each bounded.
  std::vector<std::vector<std::string>> cleanup;
  // Run before `cleanup`, only when the target did not end by itself (killed, asked to end,
  // or an exit status of 125 and up, an engine's own failure): what an engine removes on
  // its own way out (podman run --rm) but not when it is killed.
  std::vector<std::vector<std::string>> cleanup_unless_exited;

  // --- jail mode only ---
  bool share_network = false;     // false: an empty network namespace
  std::string hostname = "corral";
  std::vector<mount_entry> mounts;  // applied in order, under a new root
  std::vector<rlimit_entry> rlimits;
  // Files (v2 cgroup.procs, or v1 `tasks` one per hierarchy) the helper writes "0" into
  // before it forks the target, so the target and all it forks are inside the lease's
  // cgroup. Also read in host mode, where only the target joins (the helper stays out to
  // clean up).
  std::vector<std::string> cgroup_procs;
  std::uint32_t landlock_abi_floor = 1;
  std::vector<landlock_rule> landlock_rules;
  bool landlock_deny_tcp = true;  // ABI >= 4: no TCP bind/connect
  bool landlock_scope = true;     // ABI >= 6: signals and abstract unix sockets
  bool seccomp_kill = false;      // false: denied calls fail with EPERM
  seccomp_variant seccomp = seccomp_variant::jail;
  // Allowlist network mode: the jail's init listens on 127.0.0.1 at each port (in the
  // jail's own network namespace) and hands the listening sockets to the runtime with the
  // status line "listeners N" (SCM_RIGHTS on fd 4, a socket pair); Landlock admits TCP
  // connect to exactly these ports. Order: the HTTP proxy's, then the SOCKS5 proxy's.
  std::vector<std::uint16_t> egress_ports;
  // The program runs as uid/gid *_inside in its user namespace, mapped to *_outside on
  // the host (a single id each: nothing else of the host's is mapped). A root runtime maps
  // to an unprivileged outside id, so the jail is never the host's root for any file.
  std::uint32_t uid_inside = 65534;
  std::uint32_t gid_inside = 65534;
  std::uint32_t uid_outside = 65534;
  std::uint32_t gid_outside = 65534;

  // --- contained mode only ---
  // RLIMIT_NPROC counts every process of the uid, not the execution's: the helper sets it
  // to this many above what the target's uid already runs (0: no such limit).
  std::uint64_t process_budget = 0;

  // --- enter mode only ---
  // The holder's init, by host pid and the start time (clock ticks after boot, field 22
  // of /proc/<pid>/stat) its helper read while the pid could not be reused: a helper that
  // finds another start time refuses rather than enter whatever has that pid now.
  std::int64_t enter_pid = 0;
  std::uint64_t enter_start_time = 0;
  // The step's leftovers (background processes) stay in the workspace when the program
  // exits, instead of being ended with it.
  bool leave_running = false;
};

// A length-prefixed binary encoding: robust to any byte in any string but NUL-free
// argv/env are checked before (execve cannot carry NUL).
std::string serialize(const jail_spec& spec);
expected<jail_spec> parse_jail_spec(const std::string& bytes);

// A warm jail (`corral-exec --warm`) builds its whole boundary ahead of any request, then
// waits. Its fd 3 carries two frames, each a 4-byte native-endian length and that many
// bytes: the armed spec at once, and later the launch, a spec of which the helper takes
// only the fields below. EOF instead of a launch ends the jail without starting anything.
std::string spec_frame(const std::string& serialized);
inline constexpr std::uint32_t kMaxFrameBytes = 64u * 1024 * 1024;
// The launch's fields onto the armed spec: program, argv, envp, cwd and kill_grace_ms.
void apply_launch(jail_spec& armed, const jail_spec& launch);
// True when the two specs differ at most in the launch fields: the check that a request
// handed to a warm jail gets exactly the boundary its own plan asked for.
bool same_boundary(const jail_spec& a, const jail_spec& b);

} // namespace corral
