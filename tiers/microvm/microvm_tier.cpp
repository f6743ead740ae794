#include "tiers/microvm/microvm_tier.hpp"

#include "config/companion_program.hpp"

#include <climits>
#include <cmath>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "tiers/microvm/vm_options.hpp"
#include "tiers/external/external_tiers.hpp"
#include "tiers/external/preflight.hpp"

#ifndef CORRAL_INSTALLED_MICROVM
#define CORRAL_INSTALLED_MICROVM "/usr/local/libexec/corral/corral-microvm"
#endif

namespace corral {

namespace {

// Guest RAM when the request sets no memory limit.
constexpr std::uint64_t kDefaultProgramMemory = 256 * kMiB;
// The launcher's own deadline trails the runtime's, so the runtime's timeout (and its
// verdict) decides; the launcher's is the backstop when it runs alone.
constexpr std::chrono::milliseconds kLauncherSlack{2000};

bool readable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), R_OK) == 0;
}

} // namespace

std::string find_microvm_launcher() { return find_companion_program("corral-microvm", CORRAL_INSTALLED_MICROVM); }

microvm_tier::microvm_tier(microvm_settings settings, std::string launcher, std::chrono::milliseconds deadline,
                           std::vector<root_grant> roots)
    : settings_(std::move(settings)), launcher_(std::move(launcher)), deadline_(deadline), roots_(std::move(roots)) {}

tier_status microvm_tier::available() const {
  std::call_once(once_, [&] { status_ = preflight(); });
  return status_;
}

tier_status microvm_tier::preflight() const {
  if (::access(settings_.kvm_device.c_str(), R_OK | W_OK) != 0)
    return {false, settings_.kvm_device + " is missing or not accessible to this user; enable KVM (load kvm_intel or "
                   "kvm_amd; a VM needs nested virtualization) or add the user to group kvm"};
  auto bin = find_on_path(settings_.vmm);
  if (bin.empty())
    return {false, "the VMM '" + settings_.vmm + "' was not found; install qemu-system-x86 "
                   "or set [sandbox.microvm] vmm to qemu-system-x86_64"};
  if (std::filesystem::path(bin).filename().string().find("qemu") == std::string::npos)
    return {false, "the VMM " + bin + " is not QEMU: corral launches micro-VMs through QEMU's microvm "
                   "machine only; set [sandbox.microvm] vmm to qemu-system-x86_64"};
  auto probe = run_probe({bin, "-machine", "help"}, deadline_);
  if (!probe.ran) return {false, "the VMM " + bin + " could not be started (" + probe.error + ")"};
  if (probe.timed_out)
    return {false, "`" + bin + " -machine help` did not answer within " + std::to_string(deadline_.count()) +
                       " ms (hung VMM?)"};
  if (probe.exit_code != 0)
    return {false, "`" + bin + " -machine help` failed (exit " + std::to_string(probe.exit_code) +
                       "): " + telling_line(probe.output)};
  if (probe.output.find("microvm") == std::string::npos)
    return {false, bin + " has no microvm machine type; install Debian's qemu-system-x86 (7.2 or later)"};
  if (settings_.kernel.empty() || settings_.rootfs.empty())
    return {false, "no guest image: set [sandbox.microvm] kernel and rootfs (scripts/build-microvm-image "
                   "builds vmlinux and initramfs.cpio)"};
  for (auto* path : {&settings_.kernel, &settings_.rootfs})
    if (!readable_file(*path))
      return {false, "the guest image file " + *path + " is missing or unreadable; run "
                     "scripts/build-microvm-image or fix [sandbox.microvm]"};
  auto launcher = launcher_.empty() ? find_microvm_launcher() : launcher_;
  if (launcher.empty() || ::access(launcher.c_str(), X_OK) != 0)
    return {false, "the launcher corral-microvm was not found beside this program or at " CORRAL_INSTALLED_MICROVM
                   "; build or install it"};
  // A test boot running /bin/true: KVM that cannot run this kernel (a nested or software
  // KVM missing an instruction) shows here, within the deadline, instead of failing every
  // execution at its timeout.
  vm_options boot;
  boot.vmm = bin;
  boot.kernel = settings_.kernel;
  boot.initrd = settings_.rootfs;
  struct stat image {};
  ::stat(settings_.rootfs.c_str(), &image);
  image_bytes_ = static_cast<std::uint64_t>(image.st_size);
  boot.vm_memory_mib = vm_memory_for(0, image_bytes_);
  auto boot_deadline = settings_.boot_deadline.count() > 0 ? settings_.boot_deadline : deadline_;
  boot.timeout_ms = static_cast<std::uint64_t>(boot_deadline.count());
  boot.request.argv = {"/bin/true"};
  boot.request.cwd = kGuestWorkDir;
  std::vector<std::string> argv = {launcher};
  auto args = to_launcher_args(boot);
  argv.insert(argv.end(), args.begin(), args.end());
  auto trial = run_probe(argv, boot_deadline + std::chrono::milliseconds(500));
  if (!trial.ran) return {false, "the launcher " + launcher + " could not be started (" + trial.error + ")"};
  if (trial.timed_out || trial.exit_code != 0)
    return {false, "a test boot of the guest running /bin/true " +
                       std::string(trial.timed_out || trial.exit_code == 124
                                       ? "did not finish within " + std::to_string(boot_deadline.count()) + " ms"
                                       : "failed (exit " + std::to_string(trial.exit_code) + ")") +
                       (trial.output.empty() ? "" : ": " + telling_line(trial.output)) +
                       "; this machine's KVM cannot run the guest usably (check `dmesg` for KVM errors, "
                       "or rebuild the image with scripts/build-microvm-image)"};
  vmm_path_ = bin;
  launcher_path_ = launcher;
  return {true, ""};
}

tier_capabilities microvm_tier::capabilities() const {
  tier_capabilities c;
  bool up = available().available;
  c.timeout = c.memory = c.pids = c.cpu = up;  // the guest cgroup holds them inside the VM
  c.network_isolation = up;                    // no NIC exists
  c.filesystem_read_isolation = c.filesystem_write_isolation = up;  // only the initramfs
  c.environment_isolation = up;
  return c;
}

expected<launch_plan> microvm_tier::plan(const launch_request& request, const lease_grant&) const {
  if (auto st = available(); !st.available)
    return make_failure(failure_kind::tier_unavailable, "the microvm tier is unavailable: " + st.reason);
  if (request.argv.empty()) return make_failure(failure_kind::invalid_request, "argv is empty");

  const limits& lim = request.effective;
  vm_options o;
  o.vmm = vmm_path_;
  o.kernel = settings_.kernel;
  o.initrd = settings_.rootfs;
  o.vm_memory_mib = vm_memory_for(lim.memory_bytes.value_or(kDefaultProgramMemory), image_bytes_);
  o.vcpus = lim.cpu_cores ? static_cast<std::uint32_t>(std::max(1.0, std::ceil(*lim.cpu_cores))) : 1;
  o.timeout_ms = static_cast<std::uint64_t>((lim.timeout + kLauncherSlack).count());
  // The scratch dir is the working directory; the roots go where the profile says. All are
  // copies: a read-only one is a read-only tmpfs in the guest, a writable one comes back.
  if (!request.scratch_dir.empty()) o.trees.push_back({request.scratch_dir, kGuestWorkDir, true});
  for (auto& root : roots_) o.trees.push_back({root.host_path, root.virtual_path, root.writable});
  guest_request& g = o.request;
  g.argv = request.argv;  // resolved inside the guest: its filesystem is not the host's
  g.cwd = start_dir(request, kGuestWorkDir);
  g.timeout_ms = static_cast<std::uint64_t>(lim.timeout.count());
  g.memory_bytes = lim.memory_bytes.value_or(0);
  g.pids = lim.pids.value_or(0);
  g.cpu_millicores = lim.cpu_cores ? static_cast<std::uint64_t>(std::llround(*lim.cpu_cores * 1000)) : 0;
  g.kill_grace_ms = static_cast<std::uint32_t>(lim.kill_grace.count());
  // A terminal session: the launcher gets corral's pty and relays it, raw, to a pty of the
  // guest's own, resizes included.
  g.tty = request.controlling_tty;

  launch_plan plan;
  jail_spec& s = plan.spec;
  // Host mode for the launcher itself: its process group (QEMU included) is what the
  // runtime's timeout and cleanup kill. The boundary is the VM, not this process.
  s.mode = jail_mode::host;
  s.program = launcher_path_;
  s.argv = {launcher_path_};
  auto args = to_launcher_args(o);
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.envp = to_envp(request.env);  // the launcher hands its environment to the guest
  s.cwd = request.scratch_dir;
  s.kill_grace_ms = g.kill_grace_ms;
  s.controlling_tty = request.controlling_tty;
  plan.isolation = "microvm: QEMU microvm on KVM (" + std::to_string(o.vm_memory_mib) + " MiB, " +
                   std::to_string(o.vcpus) + " vCPU), no network device; guest cgroup v2 (memory, pids, cpu); "
                   "scratch dir and roots copied in (" + std::to_string(o.trees.size()) + " trees), writable ones copied back; "
                   "no host directory mounted";
  return plan;
}

} // namespace corral
