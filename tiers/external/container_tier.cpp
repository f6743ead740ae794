#include "tiers/external/container_tier.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "tiers/cgroups/leased_limits.hpp"

namespace corral {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::uint64_t kTmpBytes = 512 * kMiB;
// The engines' default rlimits are their own (high) hard limits, which a runtime without
// CAP_SYS_RESOURCE cannot set in the container; these are the landlock tier's, and low
// enough for any host. nproc counts per host uid, so it is a ceiling, not the pids limit.
constexpr const char* kNofile = "nofile=4096:4096";
constexpr const char* kNproc = "nproc=4096:4096";
// The lease's pids limit also counts `runc init` (a Go program, 5 tasks here) while it
// sets the container up; below this the container cannot start.
constexpr std::uint64_t kMinPids = 16;

// The CLI's own environment: never the request's (CONTAINERS_CONF, DOCKER_HOST and the
// like would reconfigure the engine), only what a rootless engine needs to find its state.
std::vector<std::string> engine_environment() {
  std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  for (const char* key : {"HOME", "XDG_RUNTIME_DIR"})
    if (const char* v = std::getenv(key)) env.push_back(std::string(key) + "=" + v);
  return env;
}

status write_env_file(const std::string& path, const std::map<std::string, std::string>& env) {
  std::string text;
  for (auto& [k, v] : env) {
    // One KEY=value per line; the engines read a bare KEY from their own environment and
    // skip lines starting with '#', so neither may pass.
    if (k.empty() || k.front() == '#' || k.find_first_of("= \t\n") != std::string::npos ||
        v.find('\n') != std::string::npos)
      return make_failure(failure_kind::invalid_request,
                          "the container tier cannot pass the environment variable '" + k +
                          "' (a newline in its value, or a key an env file cannot hold)");
    text += k + "=" + v + "\n";
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return make_failure(failure_kind::internal, "create " + path + ": " + std::strerror(errno));
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) return make_failure(failure_kind::internal, "write " + path + " failed");
  return ok();
}

} // namespace

container_tier::container_tier(const profile& prof, const kernel_features& features,
                               std::chrono::milliseconds deadline)
    : external_tier("container", deadline),
      settings_(prof.container),
      source_roots_(prof.source_roots),
      output_roots_(prof.output_roots),
      network_(prof.network),
      features_(features) {}

container_tier::container_tier(const profile& prof, std::chrono::milliseconds deadline)
    : container_tier(prof, detect_kernel_features(), deadline) {}

bool container_tier::is_docker() const { return base_name(settings_.engine).find("docker") != std::string::npos; }

std::string container_tier::private_dir(const std::string& scratch_dir) { return scratch_dir + ".container"; }

std::vector<std::string> container_tier::engine_prefix(const std::string& bin) const {
  std::vector<std::string> argv = {bin};
  if (!settings_.runtime.empty()) argv.push_back("--runtime=" + settings_.runtime);
  // The systemd manager takes a slice name, not a path into the lease's cgroups.
  if (!is_docker()) argv.push_back("--cgroup-manager=cgroupfs");
  return argv;
}

std::vector<std::string> container_tier::bare_run_argv(const std::string& bin, const std::vector<std::string>& extra,
                                                       const std::vector<std::string>& program) const {
  auto argv = engine_prefix(bin);
  argv.push_back("run");
  for (auto& f : boundary_flags()) argv.push_back(f);
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(settings_.image);
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

std::vector<std::string> container_tier::boundary_flags() const {
  std::vector<std::string> flags = {"--rm",
          network_ != network_mode::host ? "--network=none" : "--network=host",
          "--read-only",
          "--user=65534:65534",
          "--cap-drop=ALL",
          "--security-opt=no-new-privileges",
          "--tmpfs=/tmp:rw,nosuid,nodev,size=" + std::to_string(kTmpBytes),
          "--ulimit", kNofile,
          "--ulimit", kNproc,
          "--hostname=corral",
          // The container sees its own cgroup as the root, not the host's paths.
          "--cgroupns=private",
          // The engine's own default (podman: 2048) would be a second pids limit
          // nobody asked for; the lease holds the one asked for.
          "--pids-limit=-1"};
  // conmon stays in the CLI's cgroups: its task and memory are not the program's.
  if (!is_docker()) flags.push_back("--cgroups=no-conmon");
  return flags;
}

tier_status container_tier::preflight(std::chrono::milliseconds deadline) const {
  auto bin = find_on_path(settings_.engine);
  if (bin.empty())
    return {false, "the container engine CLI '" + settings_.engine + "' was not found; install podman or "
                   "docker, or set [sandbox.container] engine"};
  if (settings_.image.empty()) return {false, "no image configured: set [sandbox.container] image"};
  if (::geteuid() != 0)
    return {false, "the container tier needs corral to run as root (the container is placed in the "
                   "execution's cgroups, which hold its limits and kill-all); run corral as root or choose landlock"};
  if (features_.cgroup_version == 0)
    return {false, "no usable cgroup to hold the container's limits and kill-all (" + features_.cgroup_error +
                       "); run corral as root on a machine with the memory, pids and cpu controllers"};
  // The probes that talk to the engine run once per verdict's lifetime
  // (tiers/external/preflight_verdicts.hpp), keyed by everything the trial container used.
  std::string settings = "image=" + settings_.image + " runtime=" + settings_.runtime;
  for (auto& f : boundary_flags()) settings += " " + f;
  return trial_once(preflight_verdicts::key(name(), bin, settings), [&] { return trial(bin, deadline); });
}

tier_status container_tier::trial(const std::string& bin, std::chrono::milliseconds deadline) const {
  auto until = clock_type::now() + deadline;
  // `info` talks to the engine: a CLI without a running engine fails here, not mid-run.
  if (auto why = probe_failure(settings_.engine, {bin, "info"}, deadline); !why.empty()) return {false, why};
  // An engine that answers may still be unable to start a container with this tier's
  // flags (rlimits it may not set, a cgroup layout its runtime refuses): try one.
  static std::atomic<unsigned> trials{0};
  auto name = "corral-preflight-" + std::to_string(::getpid()) + "-" + std::to_string(++trials);
  auto argv = bare_run_argv(bin, {"--name=" + name}, {"true"});
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_type::now());
  auto r = run_probe(argv, std::max(std::chrono::milliseconds(1), left));
  // Whatever the trial did, its container must not stay (--rm does not run when the CLI
  // was killed at the deadline). Bounded by the same deadline again, at most.
  auto rm = engine_prefix(bin);
  for (const char* a : {"rm", "-f"}) rm.push_back(a);
  rm.push_back(name);
  run_probe(rm, deadline);
  std::string cmd = "`" + settings_.engine + " run … " + settings_.image + " true`";
  if (!r.ran) return {false, settings_.engine + " could not be started (" + r.error + ")"};
  if (r.timed_out)
    return {false, "a trial container " + cmd + " did not finish within " + std::to_string(deadline.count()) +
                       " ms (hung engine, or an image that must be pulled first?)"};
  if (r.exit_code != 0) {
    std::string why = "a trial container " + cmd + " failed (exit " + std::to_string(r.exit_code) +
                      "): " + telling_line(r.output);
    if (r.output.find("hybrid mode") != std::string::npos)
      why += "; crun refuses this machine's mixed cgroup v1/v2 layout: set [sandbox.container] runtime = \"runc\"";
    return {false, why};
  }
  return {true, ""};
}

tier_capabilities container_tier::capabilities() const {
  return leased_capabilities(available().available, features_, network_);
}

expected<launch_plan> container_tier::plan(const launch_request& request, const lease_grant& grant) const {
  if (!available().available) return unavailable_error();
  if (request.argv.empty()) return make_failure(failure_kind::invalid_request, "argv is empty");
  if (request.effective.pids && *request.effective.pids < kMinPids)
    return make_failure(failure_kind::invalid_request,
                        "the container tier counts the runtime's own setup tasks (runc init) against the pids "
                        "limit; ask for at least " + std::to_string(kMinPids) +
                        " pids, or choose landlock for a tighter limit");
  if (grant.cgroup_path.empty())
    return make_failure(failure_kind::internal, "the container tier was given no cgroup lease to run the container in");
  auto bin = find_on_path(settings_.engine);
  auto rm = resolve_program("rm", "/usr/bin:/bin");
  if (bin.empty() || !rm)
    return make_failure(failure_kind::tier_unavailable, "the engine CLI or rm vanished since the preflight");

  if (::geteuid() == 0 && ::chown(request.scratch_dir.c_str(), 65534, 65534) < 0)
    return make_failure(failure_kind::internal, "chown of the scratch dir " + request.scratch_dir + " failed");
  auto dir = private_dir(request.scratch_dir);
  auto env_file = dir + "/env";
  if (auto s = make_private_dir(dir, [&] { return write_env_file(env_file, request.env); }); !s) return s.error();

  // The scratch dir's name is unique per execution: it names the container too.
  auto name = base_name(request.scratch_dir);
  launch_plan plan;
  jail_spec& s = plan.spec;
  s.mode = jail_mode::host;
  s.program = bin;
  s.argv = engine_prefix(bin);
  s.argv.push_back("run");
  for (auto& f : boundary_flags()) s.argv.push_back(f);
  // -i: the program's stdin is the helper's (a pipe or /dev/null), as on every tier.
  for (auto& a : {"--name=" + name, std::string("--interactive"), std::string("--log-driver=none"), "--env-file=" + env_file,
                  "--volume=" + request.scratch_dir + ":" + kWorkDir + ":rw", "--workdir=" + start_dir(request, kWorkDir)})
    s.argv.push_back(a);
  for (auto& r : source_roots_) s.argv.push_back("--volume=" + r.host_path + ":" + r.virtual_path + ":ro");
  for (auto& r : output_roots_) s.argv.push_back("--volume=" + r.host_path + ":" + r.virtual_path + ":rw");
  // A terminal session: the container gets a pty of its own, which the CLI (on corral's
  // pty) relays and resizes on SIGWINCH.
  if (request.controlling_tty) s.argv.push_back("--tty");
  // The lease's limits hold for what the engine makes below it; engine limits on the
  // container's own cgroup would hit first and hide the verdict from the lease.
  s.argv.push_back("--cgroup-parent=" + grant.cgroup_path);
  s.argv.push_back(settings_.image);
  for (auto& a : request.argv) s.argv.push_back(a);  // resolved in the image, by its PATH
  s.envp = engine_environment();
  s.cwd = dir;
  s.kill_grace_ms = static_cast<std::uint32_t>(request.effective.kill_grace.count());
  s.controlling_tty = request.controlling_tty;
  auto remove = engine_prefix(bin);
  for (const char* a : {"rm", "-f"}) remove.push_back(a);
  remove.push_back(name);
  // `--rm` removes the container when the engine CLI ends on its own; killed (timeout,
  // cancel, kill-all) it cannot, and `rm -f` does (37 ms of podman here, so only then).
  s.cleanup_unless_exited = {remove};
  s.cleanup = {{*rm, "-rf", "--one-file-system", "--", dir}};

  auto held = held_limits(request.effective, features_, plan.not_enforced);
  if (network_ == network_mode::host) plan.not_enforced.push_back("network_isolation");
  plan.isolation = "container: " + base_name(bin) + (settings_.runtime.empty() ? "" : " (" + settings_.runtime + ")") +
                   " image " + settings_.image + (network_ != network_mode::host ? ", no network" : ", host network") +
                   ", read-only root, uid 65534, no capabilities, no new privileges; cgroup v" +
                   std::to_string(features_.cgroup_version) + " around the container" + held;
  return plan;
}

} // namespace corral
