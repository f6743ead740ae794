#include "tiers/external/gvisor_tier.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "tiers/external/oci_bundle.hpp"
#include "tiers/cgroups/leased_limits.hpp"
#include "tiers/jail/system_view.hpp"

namespace corral {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::uint64_t kTmpBytes = 512 * kMiB;
constexpr std::uint32_t kNobody = 65534;
constexpr const char* kProbeToken = "corral-gvisor-preflight";
// What runsc itself gets: it needs nothing of the caller's environment.
constexpr const char* kRunscPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";

} // namespace

gvisor_tier::gvisor_tier(const profile& prof, const kernel_features& features, std::chrono::milliseconds deadline)
    : external_tier("gvisor", deadline),
      settings_(prof.gvisor),
      source_roots_(prof.source_roots),
      output_roots_(prof.output_roots),
      network_(prof.network),
      features_(features) {}

std::string gvisor_tier::private_dir(const std::string& scratch_dir) { return scratch_dir + ".gvisor"; }

tier_status gvisor_tier::preflight(std::chrono::milliseconds deadline) const {
  auto bin = find_on_path(settings_.runsc);
  if (bin.empty())
    return {false, "runsc ('" + settings_.runsc + "') was not found; install gVisor (Debian package runsc) "
                   "or set [sandbox.gvisor] runsc"};
  if (::geteuid() != 0)
    return {false, "the gvisor tier needs corral to run as root (runsc run builds the sandbox's namespaces "
                   "and corral places it in the execution's cgroups); run corral as root or choose landlock"};
  if (features_.cgroup_version == 0)
    return {false, "no usable cgroup to hold the sandbox's limits and kill-all (" + features_.cgroup_error +
                       "); run corral as root on a machine with the memory, pids and cpu controllers"};
  // The probes that start runsc (a version, then a trial sandbox) run once per verdict's
  // lifetime (tiers/external/preflight_verdicts.hpp).
  return trial_once(preflight_verdicts::key(name(), bin, "platform=" + settings_.platform),
                    [&] { return trial(bin, deadline); });
}

tier_status gvisor_tier::trial(const std::string& bin, std::chrono::milliseconds deadline) const {
  auto until = clock_type::now() + deadline;
  if (auto why = probe_failure("runsc", {bin, "--version"}, deadline); !why.empty()) return {false, why};
  // A version answers without a sandbox; only starting one shows that this kernel and
  // platform let runsc run (ptrace allowed, no seccomp of the host's in the way).
  std::string tmpl = (std::filesystem::temp_directory_path() / "corral-runsc-probe-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) return {false, "mkdtemp " + tmpl + ": " + std::strerror(errno)};
  std::vector<std::string> argv = {bin, "--root", tmpl, "--network=none", "--ignore-cgroups"};
  if (!settings_.platform.empty()) argv.push_back("--platform=" + settings_.platform);
  for (const char* a : {"do", "/bin/echo", kProbeToken}) argv.push_back(a);
  auto left = std::max(std::chrono::milliseconds(1),
                       std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_type::now()));
  auto r = run_probe(argv, left);
  std::error_code ignored;
  std::filesystem::remove_all(tmpl, ignored);
  std::string cmd = bin + " do /bin/echo " + kProbeToken;
  if (!r.ran) return {false, "runsc could not be started (" + r.error + ")"};
  if (r.timed_out)
    return {false, "a trial sandbox (`" + cmd + "`) did not finish within " + std::to_string(deadline.count()) +
                       " ms (hung runtime?)"};
  if (r.exit_code != 0 || r.output.find(kProbeToken) == std::string::npos)
    return {false, "a trial sandbox (`" + cmd + "`) failed (exit " + std::to_string(r.exit_code) +
                       "): " + telling_line(r.output) + "; see `runsc --debug-log` for why this kernel refuses it"};
  return {true, ""};
}

tier_capabilities gvisor_tier::capabilities() const {
  return leased_capabilities(available().available, features_, network_);
}

expected<launch_plan> gvisor_tier::plan(const launch_request& request, const lease_grant& grant) const {
  if (!available().available) return unavailable_error();
  if (request.argv.empty()) return make_failure(failure_kind::invalid_request, "argv is empty");
  if (request.effective.pids && *request.effective.pids < kMinPids)
    return make_failure(failure_kind::invalid_request,
                        "the gvisor tier counts runsc's own host tasks (the sandbox, the gofer and their "
                        "threads) against the pids limit; ask for at least " + std::to_string(kMinPids) +
                        " pids, or choose landlock for a tighter limit");
  if (grant.cgroup_procs.empty())
    return make_failure(failure_kind::internal, "the gvisor tier was given no cgroup lease to run the sandbox in");
  auto program = resolve_program(request.argv.front(),
                                 visible_search_path(request.caller_path, source_roots_, output_roots_));
  if (!program) return program.error();
  std::string inside = *program;
  if (inside.front() == '/') {
    inside = visible_in_view(*program, source_roots_, output_roots_);
    if (inside.empty())
      return make_failure(failure_kind::spawn_failed,
                          "program " + *program + " is outside the gvisor sandbox's filesystem view "
                          "(/usr, /bin, /lib* and the granted roots); grant its directory as a source root");
  }
  auto runsc = find_on_path(settings_.runsc);
  auto rm = resolve_program("rm", "/usr/bin:/bin");
  if (runsc.empty() || !rm) return make_failure(failure_kind::tier_unavailable, "runsc or rm vanished since the preflight");

  oci_bundle_spec b;
  b.process.args = request.argv;
  b.process.args.front() = inside;  // OCI has no separate program: args[0] is what runs
  b.process.env = to_envp(request.env);
  b.process.cwd = start_dir(request, kWorkDir);
  b.process.uid = kNobody;
  b.process.gid = kNobody;
  b.network_namespace = network_ != network_mode::host;  // allowlist: refused by the planner
  auto ro = [&](const std::string& host, const std::string& target) {
    b.mounts.push_back({oci_mount::kind::ro_bind, host, target, 0});
  };
  for (auto& dir : system_dirs())
    if (path_exists(dir)) ro(dir, dir);
  for (auto& file : etc_essentials())
    if (path_exists(file)) ro(file, file);
  if (!b.network_namespace && path_exists("/etc/resolv.conf")) ro("/etc/resolv.conf", "/etc/resolv.conf");
  b.mounts.push_back({oci_mount::kind::tmpfs, "", "/tmp", kTmpBytes});
  for (auto& r : source_roots_) ro(r.host_path, r.virtual_path);
  for (auto& r : output_roots_) b.mounts.push_back({oci_mount::kind::rw_bind, r.host_path, r.virtual_path, 0});
  b.mounts.push_back({oci_mount::kind::rw_bind, request.scratch_dir, kWorkDir, 0});

  if (::chown(request.scratch_dir.c_str(), kNobody, kNobody) < 0)
    return make_failure(failure_kind::internal, "chown of the scratch dir " + request.scratch_dir + " failed");
  auto dir = private_dir(request.scratch_dir);
  auto bundle = dir + "/bundle";
  auto state = dir + "/state";
  auto filled = make_private_dir(dir, [&]() -> status {
    if (::mkdir(state.c_str(), 0700) < 0)
      return make_failure(failure_kind::internal, "mkdir " + state + ": " + std::strerror(errno));
    return write_oci_bundle(bundle, b);
  });
  if (!filled) return filled.error();

  // The scratch dir's name is unique per execution: it names the sandbox too.
  auto id = base_name(request.scratch_dir);
  launch_plan plan;
  jail_spec& s = plan.spec;
  s.mode = jail_mode::host;
  s.program = runsc;
  s.argv = {runsc, "--root", state, b.network_namespace ? "--network=none" : "--network=host", "--ignore-cgroups"};
  if (!settings_.platform.empty()) s.argv.push_back("--platform=" + settings_.platform);
  for (auto& a : {std::string("run"), std::string("--bundle"), bundle, id}) s.argv.push_back(a);
  s.envp = {kRunscPath};
  s.cwd = bundle;
  s.kill_grace_ms = static_cast<std::uint32_t>(request.effective.kill_grace.count());
  s.controlling_tty = request.controlling_tty;
  s.cgroup_procs = grant.cgroup_procs;
  // `runsc run` deletes its container when it ends on its own (an exit of 128 is its own
  // failure); killed, it cannot, and `delete --force` does (25 ms of runsc, so only then).
  s.cleanup_unless_exited = {{runsc, "--root", state, "delete", "--force", id}};
  s.cleanup = {{*rm, "-rf", "--one-file-system", "--", dir}};

  auto held = held_limits(request.effective, features_, plan.not_enforced);
  if (!b.network_namespace) plan.not_enforced.push_back("network_isolation");
  plan.isolation = "gvisor: runsc sandbox (platform " + (settings_.platform.empty() ? std::string("default") : settings_.platform) +
                   ")" + (b.network_namespace ? ", no network" : ", host network") +
                   ", read-only root with the granted roots, uid 65534 without capabilities; cgroup v" +
                   std::to_string(features_.cgroup_version) + " around the whole sandbox" +
                   held;
  return plan;
}

} // namespace corral
