#include "tiers/contained/contained_tier.hpp"

#include <cmath>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tiers/contained/split_grants.hpp"
#include "tiers/jail/landlock_tier.hpp"
#include "tiers/jail/system_view.hpp"

namespace corral {

namespace {

// Whether this process may change its uid and gid (CAP_SETUID, CAP_SETGID in CapEff).
bool can_change_ids() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("CapEff:", 0) == 0) {
      auto caps = std::stoull(line.substr(7), nullptr, 16);
      return (caps & (1ull << 6)) && (caps & (1ull << 7));
    }
  return false;
}

bool root_runtime() { return ::geteuid() == 0; }

// The device nodes a program may open, as the landlock tier's /dev has them.
constexpr const char* kDevices[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"};

} // namespace

contained_tier::contained_tier(const profile& prof, const kernel_features& features)
    : source_roots_(prof.source_roots),
      output_roots_(prof.output_roots),
      masks_(prof.masks),
      working_dir_(prof.working_dir),
      network_(prof.network),
      settings_(prof.landlock),
      features_(features),
      enclosing_(read_enclosing_limits()) {}

tier_status contained_tier::available() const {
  if (features_.landlock_abi == 0)
    return {false, "Landlock is unavailable: " + features_.landlock_error +
                       " (the contained tier needs Landlock and seccomp only; enable Landlock with the lsm= boot "
                       "parameter or CONFIG_SECURITY_LANDLOCK)"};
  if (features_.landlock_abi < static_cast<int>(settings_.abi_floor))
    return {false, "the kernel's Landlock ABI is " + std::to_string(features_.landlock_abi) + ", below the floor " +
                       std::to_string(settings_.abi_floor) + " set by [sandbox.landlock] abi_floor"};
  if (!features_.seccomp) return {false, "seccomp filters are unavailable (CONFIG_SECCOMP_FILTER)"};
  // Root is exempt from RLIMIT_NPROC and owns root's files: the program must run as
  // another uid, which takes CAP_SETUID and CAP_SETGID.
  if (root_runtime() && !can_change_ids())
    return {false, "corral runs as root without CAP_SETUID/CAP_SETGID, so its programs would run as root (which "
                   "no process rlimit bounds); run corral as a non-root user (Kubernetes: runAsNonRoot with "
                   "runAsUser), or keep those two capabilities"};
  return {true, ""};
}

tier_capabilities contained_tier::capabilities() const {
  tier_capabilities c;
  if (!available().available) return c;
  c.timeout = true;
  c.filesystem_read_isolation = true;
  c.filesystem_write_isolation = true;
  c.environment_isolation = true;
  c.network_isolation = network_ != network_mode::host;
  // Memory, processes and CPU are bounded per process or per uid by rlimits, not for the
  // execution as a whole: not claimed here, said in each plan's not_enforced.
  return c;
}

std::vector<std::string> contained_tier::not_enforced(const kernel_features& features, network_mode network) {
  std::vector<std::string> out = {
      "process_visibility: the host's processes are visible in /proc (their command lines; not their "
      "environment or memory)",
      "memory_limit: RLIMIT_DATA per process, not for the execution's processes together; no OOM verdict",
      "pids_limit: RLIMIT_NPROC counts every process of the uid, not the execution's",
      "cpu_limit: RLIMIT_CPU seconds per process, no share of the cores",
      "private_tmp: /tmp and /dev/shm are not granted (TMPDIR and HOME are the execution's own scratch dir)",
      "unix_sockets: none can be created (socketpair only): the host's are not hidden",
  };
  if (features.landlock_abi < 6)
    out.push_back("signals: Landlock ABI " + std::to_string(features.landlock_abi) +
                  " < 6 does not scope them; the program can signal every process of its uid");
  if (features.landlock_abi < 3)
    out.push_back("truncate: Landlock ABI " + std::to_string(features.landlock_abi) +
                  " < 3 does not govern truncate(2) on files the uid may write");
  if (network == network_mode::host) out.push_back("network_isolation");
  if (network == network_mode::allowlist)
    out.push_back("egress_listeners: the proxy listens on the host's loopback, where other local processes can "
                  "reach it too");
  return out;
}

expected<launch_plan> contained_tier::plan(const launch_request& request, const lease_grant&) const {
  if (auto st = available(); !st.available)
    return make_failure(failure_kind::tier_unavailable, "the contained tier is unavailable: " + st.reason);
  if (request.argv.empty()) return make_failure(failure_kind::invalid_request, "argv is empty");
  for (auto* list : {&source_roots_, &output_roots_})
    for (auto& r : *list)
      if (r.virtual_path != r.host_path)
        return make_failure(failure_kind::refused,
                            "the contained tier shows every root at its host path (it has no mount namespace to "
                            "move it), but " + r.host_path + " is granted at " + r.virtual_path +
                                "; grant it without :INSIDE, or use the landlock tier");
  auto search_path = visible_search_path(request.caller_path, source_roots_, output_roots_);
  auto program = resolve_program(request.argv.front(), search_path);
  if (!program) return program.error();
  std::string cwd = start_dir(request, working_dir_.empty() || request.start_in_scratch ? request.scratch_dir : working_dir_);
  std::string exe = *program;
  if (exe.front() != '/') exe = cwd + "/" + exe;
  bool visible = is_under(exe, request.scratch_dir) || !visible_in_view(exe, source_roots_, output_roots_).empty();
  if (!visible)
    return make_failure(failure_kind::spawn_failed,
                        "program " + *program + " is outside what the contained tier grants (/usr, /bin, /lib* and "
                        "the granted roots); grant its directory as a source root");

  launch_plan plan;
  jail_spec& s = plan.spec;
  s.mode = jail_mode::contained;
  s.program = exe;
  s.argv = request.argv;
  auto env = with_jail_defaults(request.env, search_path);
  // The execution's own scratch dir instead of the jail's private /tmp, which this tier has not.
  for (const char* name : {"HOME", "TMPDIR"})
    if (!request.env.count(name)) env[name] = request.scratch_dir;
  s.envp = to_envp(network_ == network_mode::allowlist ? with_egress_proxy_env(std::move(env)) : std::move(env));
  s.cwd = cwd;
  s.kill_grace_ms = static_cast<std::uint32_t>(request.effective.kill_grace.count());
  s.controlling_tty = request.controlling_tty;
  s.share_network = network_ == network_mode::host;

  for (auto& dir : system_dirs())
    if (path_exists(dir)) s.landlock_rules.push_back({dir, false});
  for (auto& file : etc_essentials())
    if (path_exists(file)) s.landlock_rules.push_back({file, false});
  if (s.share_network && path_exists("/etc/resolv.conf")) s.landlock_rules.push_back({"/etc/resolv.conf", false});
  for (const char* node : kDevices)
    if (path_exists(node)) s.landlock_rules.push_back({node, true});
  if (path_exists("/dev/pts")) s.landlock_rules.push_back({"/dev/pts", true});
  s.landlock_rules.push_back({"/proc", false});
  s.landlock_rules.push_back({request.scratch_dir, true});
  std::vector<std::string> split;
  for (auto* list : {&source_roots_, &output_roots_})
    for (auto& r : *list)
      for (auto& rule : split_root_rules(r.host_path, r.writable, masks_, split)) s.landlock_rules.push_back(rule);
  for (auto& m : masks_)
    plan.masked.push_back(m.virtual_path + (m.kind == mask_kind::hidden ? " (hidden: " : " (read-only: ") + m.what +
                          ", by Landlock rules around it)");

  const limits& lim = request.effective;
  s.rlimits = {
      {RLIMIT_CORE, 0, 0},
      {RLIMIT_NOFILE, 4096, 4096},
      {RLIMIT_FSIZE, 4ull << 30, 4ull << 30},
      {RLIMIT_STACK, 8 * kMiB, 64 * kMiB},
  };
  if (lim.memory_bytes) s.rlimits.push_back({RLIMIT_DATA, *lim.memory_bytes, *lim.memory_bytes});
  // CPU seconds: the wall-clock timeout on every core the execution may use, plus one.
  double cores = lim.cpu_cores ? std::max(1.0, *lim.cpu_cores) : static_cast<double>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  auto cpu_seconds = static_cast<std::uint64_t>(std::ceil(std::chrono::duration<double>(lim.timeout).count() * cores)) + 1;
  if (lim.timeout.count() > 0) s.rlimits.push_back({RLIMIT_CPU, cpu_seconds, cpu_seconds + 1});
  if (lim.pids) s.process_budget = *lim.pids;

  s.landlock_abi_floor = settings_.abi_floor;
  s.landlock_deny_tcp = !s.share_network;
  s.landlock_scope = true;
  s.seccomp_kill = settings_.seccomp_kill;
  s.seccomp = network_ == network_mode::host        ? seccomp_variant::contained_open
              : network_ == network_mode::allowlist ? seccomp_variant::contained_brokered
                                                    : seccomp_variant::contained_closed;
  if (network_ == network_mode::allowlist)
    s.egress_ports = {landlock_tier::kHttpProxyPort, landlock_tier::kSocksProxyPort};

  // A root runtime's program runs as nobody: root is exempt from RLIMIT_NPROC and owns
  // root's files. Its scratch dir becomes nobody's, and the dirs above it searchable (not
  // listable) so nobody can reach it by path (actors/runtime.cpp allows 0711 there).
  bool root = root_runtime();
  s.uid_inside = root ? kLandlockJailUser : ::getuid();
  s.gid_inside = root ? kLandlockJailUser : ::getgid();
  s.uid_outside = s.uid_inside;
  s.gid_outside = s.gid_inside;
  if (root) {
    if (::chown(request.scratch_dir.c_str(), kLandlockJailUser, kLandlockJailUser) < 0)
      return make_failure(failure_kind::internal, "chown of the scratch dir " + request.scratch_dir + " failed");
    auto parent = request.scratch_dir.substr(0, request.scratch_dir.rfind('/'));
    for (auto dir : {parent, parent.substr(0, parent.rfind('/'))}) {
      struct stat st {};
      if (!dir.empty() && ::stat(dir.c_str(), &st) == 0 && st.st_uid == 0 && (st.st_mode & 0777) == 0700)
        ::chmod(dir.c_str(), 0711);
    }
    // The dirs above those are the operator's: said, not changed.
    for (auto dir = parent; dir.size() > 1; dir = dir.substr(0, std::max<std::size_t>(1, dir.rfind('/')))) {
      struct stat st {};
      if (::stat(dir.c_str(), &st) == 0 && !(st.st_mode & S_IXOTH))
        return make_failure(failure_kind::refused,
                            "the contained tier runs programs as uid " + std::to_string(kLandlockJailUser) +
                                ", who cannot reach the scratch dir: " + dir +
                                " is not searchable by others (chmod o+x it, or keep the state dir under /run)");
    }
  }

  plan.not_enforced = not_enforced(features_, network_);
  std::string split_note;
  if (!split.empty())
    split_note = "; above protected paths (" + std::to_string(split.size()) +
                 " dirs) entries can be listed but not created, removed or renamed";
  plan.isolation = "contained: no namespaces; Landlock ABI " + std::to_string(features_.landlock_abi) +
                   " on host paths; seccomp (" + (s.seccomp_kill ? "kill" : "EPERM") + ", " +
                   (network_ == network_mode::host        ? "host network"
                    : network_ == network_mode::allowlist ? "egress only through the allow-list proxy, brokered"
                                                          : "no inet, unix or netlink sockets") +
                   "); rlimits; uid " + std::to_string(s.uid_inside) + split_note +
                   (enclosing_.any() ? "; the enclosing cgroup bounds all executions together: " + enclosing_.describe() : "");
  return plan;
}

} // namespace corral
