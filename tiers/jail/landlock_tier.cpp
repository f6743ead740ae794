#include "tiers/jail/landlock_tier.hpp"

#include "tiers/jail/idmapped_mount.hpp"
#include "tiers/cgroups/leased_limits.hpp"
#include "tiers/jail/system_view.hpp"

#include <algorithm>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace corral {

namespace {

constexpr std::uint32_t kNobody = kLandlockJailUser;

} // namespace

std::map<std::string, std::string> with_egress_proxy_env(std::map<std::string, std::string> env) {
  // Both cases: curl reads http_proxy only in lower case, many others upper case only.
  std::string http = "http://127.0.0.1:" + std::to_string(landlock_tier::kHttpProxyPort);
  std::string socks = "socks5h://127.0.0.1:" + std::to_string(landlock_tier::kSocksProxyPort);
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}) env[name] = http;
  for (const char* name : {"ALL_PROXY", "all_proxy"}) env[name] = socks;
  for (const char* name : {"NO_PROXY", "no_proxy"}) env[name] = "localhost,127.0.0.1,::1";
  return env;
}

landlock_tier::landlock_tier(const profile& prof, const kernel_features& features)
    : source_roots_(prof.source_roots),
      output_roots_(prof.output_roots),
      masks_(prof.masks),
      working_dir_(prof.working_dir),
      network_(prof.network),
      settings_(prof.landlock),
      features_(features) {
  for (auto& r : output_roots_) idmap_problems_[r.host_path] = idmapped_mount_problem(r.host_path);
}

tier_status landlock_tier::available() const {
  if (!features_.user_namespaces)
    return {false, "user namespaces cannot be created here (" + features_.user_namespace_error +
                       "); enable them or choose another tier"};
  if (features_.landlock_abi == 0)
    return {false, "Landlock is unavailable: " + features_.landlock_error};
  if (features_.landlock_abi < static_cast<int>(settings_.abi_floor))
    return {false, "the kernel's Landlock ABI is " + std::to_string(features_.landlock_abi) +
                       ", below the floor " + std::to_string(settings_.abi_floor) +
                       " set by [sandbox.landlock] abi_floor; upgrade the kernel or lower the floor"};
  if (!features_.seccomp) return {false, "seccomp filters are unavailable (CONFIG_SECCOMP_FILTER)"};
  if (features_.cgroup_version == 0)
    return {false, "no usable cgroup for per-execution limits and kill-all (" + features_.cgroup_error +
                       "). Two ways out: a daemon run by root that admits this user (`sudo corral serve "
                       "--allow-uid " + std::to_string(::geteuid()) + "`, then `corral run --connect ...`), "
                       "or, on cgroup v2, a subtree with the memory, pids and cpu controllers delegated to "
                       "this user (`systemd-run --user --scope -p Delegate=yes corral ...`)"};
  return {true, ""};
}

tier_capabilities landlock_tier::capabilities() const {
  return leased_capabilities(available().available, features_, network_);
}

std::string landlock_tier::visible_path(const std::string& host_path) const {
  return visible_in_view(host_path, source_roots_, output_roots_);
}

expected<launch_plan> landlock_tier::plan(const launch_request& request, const lease_grant& grant) const {
  if (auto st = available(); !st.available)
    return make_failure(failure_kind::tier_unavailable, "the landlock tier is unavailable: " + st.reason);
  if (request.argv.empty()) return make_failure(failure_kind::invalid_request, "argv is empty");
  // The caller's PATH as far as the jail can see it.
  auto search_path = visible_search_path(request.caller_path, source_roots_, output_roots_);
  auto program = resolve_program(request.argv.front(), search_path);
  if (!program) return program.error();
  std::string inside = *program;
  if (inside.front() != '/' && working_dir_.empty() && !request.start_in_scratch)
    return make_failure(failure_kind::spawn_failed,
                        "program " + inside + " not found: a relative path starts in the working directory, the "
                        "empty scratch dir " + std::string(kWorkDir) + "; grant its directory with --here (or --rw/--ro "
                        "and --cwd), or give its path inside the view");
  if (inside.front() == '/') {
    inside = visible_path(*program);
    if (inside.empty())
      return make_failure(failure_kind::spawn_failed,
                          "program " + *program + " is outside the landlock tier's filesystem view "
                          "(/usr, /bin, /lib* and the granted roots); grant its directory as a source root");
  }

  launch_plan plan;
  jail_spec& s = plan.spec;
  s.mode = jail_mode::jail;
  s.program = inside;
  s.argv = request.argv;
  auto env = with_jail_defaults(request.env, search_path);
  s.envp = to_envp(network_ == network_mode::allowlist ? with_egress_proxy_env(std::move(env)) : std::move(env));
  s.cwd = start_dir(request, working_dir_.empty() || request.start_in_scratch ? kWorkDir : working_dir_);
  s.kill_grace_ms = static_cast<std::uint32_t>(request.effective.kill_grace.count());
  s.controlling_tty = request.controlling_tty;
  s.share_network = network_ == network_mode::host;

  auto ro = [&](const std::string& host, const std::string& target) {
    s.mounts.push_back({.kind = mount_kind::ro_bind, .source = host, .target = target});
    s.landlock_rules.push_back({target, false});
  };
  auto rw = [&](const std::string& host, const std::string& target) {
    s.mounts.push_back({.kind = mount_kind::rw_bind, .source = host, .target = target});
    s.landlock_rules.push_back({target, true});
  };
  // Only what exists: a rule or bind for a missing path would fail the launch.
  for (auto& dir : system_dirs())
    if (path_exists(dir)) ro(dir, dir);
  for (auto& file : etc_essentials())
    if (path_exists(file)) ro(file, file);
  if (s.share_network && path_exists("/etc/resolv.conf")) ro("/etc/resolv.conf", "/etc/resolv.conf");
  // Both bounded by size (ENOSPC) and, as tmpfs pages, by the memory limit.
  s.mounts.push_back({.kind = mount_kind::tmpfs, .source = "", .target = "/tmp", .size_bytes = request.effective.tmp_bytes});
  s.landlock_rules.push_back({"/tmp", true});
  s.mounts.push_back({.kind = mount_kind::dev, .source = "", .target = "/dev", .size_bytes = request.effective.shm_bytes});  // its /dev/shm
  for (const char* node : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"})
    s.landlock_rules.push_back({node, true});
  s.landlock_rules.push_back({"/dev/pts", true});
  s.landlock_rules.push_back({"/dev/shm", true});
  s.mounts.push_back({.kind = mount_kind::proc, .source = "", .target = "/proc"});
  s.landlock_rules.push_back({"/proc", false});
  // The scratch dir before the roots, so a root's inside path may lie below /work.
  rw(request.scratch_dir, kWorkDir);
  if (!request.home.empty()) rw(request.scratch_dir, request.home);
  // Outer roots before inner ones: a prefix sorts first (check_root_layout made sure the
  // inner mount point exists in the outer root).
  std::vector<const root_grant*> roots;
  for (auto* list : {&source_roots_, &output_roots_})
    for (auto& r : *list) roots.push_back(&r);
  std::sort(roots.begin(), roots.end(), [](auto* a, auto* b) { return a->virtual_path < b->virtual_path; });
  std::string ownership;
  for (auto* r : roots) {
    if (!r->writable) {
      ro(r->host_path, r->virtual_path);
      continue;
    }
    rw(r->host_path, r->virtual_path);
    // What the program writes belongs to the root's owner, who the program is on this mount.
    struct stat st {};
    auto problem = idmap_problems_.count(r->host_path) ? idmap_problems_.at(r->host_path) : "not probed";
    if (problem.empty() && ::stat(r->host_path.c_str(), &st) == 0) {
      auto& m = s.mounts.back();
      m.idmapped = true;
      m.owner_uid = st.st_uid;
      m.owner_gid = st.st_gid;
    } else if (ownership.empty()) {
      ownership = "; writable roots are written as the jail's own id (" + r->host_path +
                  " cannot be idmapped: " + (problem.empty() ? "stat failed" : problem) + ")";
    }
  }
  if (ownership.empty() && !output_roots_.empty()) ownership = "; writable roots idmapped to their owners";
  // Masks last, over what the roots show. A read-only .git inside a writable root is
  // refused by its read-only mount: the root's Landlock rule grants writing beneath it and
  // Landlock rights only add up, so no rule can take writing away below it.
  for (auto& m : masks_) {
    s.mounts.push_back({.kind = m.kind == mask_kind::hidden ? mount_kind::hidden : mount_kind::ro_bind,
                        .source = m.host_path,
                        .target = m.virtual_path,
                        .size_bytes = 0,
                        .optional = true});
    plan.masked.push_back(m.virtual_path + (m.kind == mask_kind::hidden ? " (hidden: " : " (read-only: ") + m.what + ")");
  }

  s.rlimits = {
      {RLIMIT_CORE, 0, 0},
      {RLIMIT_NOFILE, 4096, 4096},
      {RLIMIT_FSIZE, 4ull << 30, 4ull << 30},
      {RLIMIT_STACK, 8 * kMiB, 64 * kMiB},
  };
  s.cgroup_procs = grant.cgroup_procs;
  s.landlock_abi_floor = settings_.abi_floor;
  s.landlock_deny_tcp = !s.share_network;
  if (network_ == network_mode::allowlist) s.egress_ports = {kHttpProxyPort, kSocksProxyPort};
  s.landlock_scope = true;
  s.seccomp_kill = settings_.seccomp_kill;

  // A root runtime maps the jail to nobody: it must never be the host's root for any file.
  // An unprivileged runtime can only map its own ids.
  bool root = ::geteuid() == 0;
  s.uid_inside = kNobody;
  s.gid_inside = kNobody;
  s.uid_outside = root ? kNobody : ::getuid();
  s.gid_outside = root ? kNobody : ::getgid();
  if (root && ::chown(request.scratch_dir.c_str(), kNobody, kNobody) < 0)
    return make_failure(failure_kind::internal, "chown of the scratch dir " + request.scratch_dir + " failed");

  auto held = held_limits(request.effective, features_, plan.not_enforced);
  if (s.share_network) plan.not_enforced.push_back("network_isolation");
  plan.isolation = "landlock: user, pid, mount, ipc, uts, cgroup" +
                   std::string(s.share_network ? "" : ", network") + " namespaces" +
                   (s.egress_ports.empty() ? "" : " (egress only through the allow-list proxy)") + "; Landlock ABI " +
                   std::to_string(features_.landlock_abi) + "; seccomp (" +
                   (s.seccomp_kill ? "kill" : "EPERM") + "); cgroup v" +
                   std::to_string(features_.cgroup_version) + ownership +
                   held;
  return plan;
}

} // namespace corral
