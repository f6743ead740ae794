#include "tiers/microvm/vm_options.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace corral {

namespace {

constexpr std::size_t kMaxScratchFiles = 64;
constexpr std::uint64_t kMaxScratchBytes = 8ull << 20;  // must fit one request frame
constexpr std::uint64_t kGuestOverheadMiB = 96;         // kernel, initramfs, agent
constexpr std::uint64_t kGuestFloorMiB = 128;

// Kernel command line. Why each word:
//   console=ttyS0 loglevel=1  the port is the agent's channel; only a panic prints there
//                             (before the agent's marker, which the launcher skips)
//   panic=-1                  a panic resets at once, and -no-reboot turns that into exit
//   mitigations=off           the guest holds one untrusted program and the agent; the
//                             host kernel's own mitigations protect the host from the VM
//   init_on_alloc=0 ...       every guest page fault is costly under nested KVM
const char kCmdline[] =
    "console=ttyS0 loglevel=1 panic=-1 mitigations=off nokaslr init_on_alloc=0 init_on_free=0 "
    "tsc=reliable no_timer_check cryptomgr.notests random.trust_cpu=on rdinit=/init";

expected<std::uint64_t> number(const std::string& flag, const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 19)
    return make_failure(failure_kind::invalid_request, flag + " needs a number, got '" + text + "'");
  return std::stoull(text);
}

} // namespace

std::uint64_t vm_memory_for(std::uint64_t program_memory_bytes) {
  std::uint64_t mib = (program_memory_bytes + (1ull << 20) - 1) >> 20;
  return std::max<std::uint64_t>(kGuestFloorMiB, mib + kGuestOverheadMiB);
}

std::vector<std::string> to_launcher_args(const vm_options& o) {
  const guest_request& r = o.request;
  std::vector<std::string> a = {"--vmm", o.vmm, "--kernel", o.kernel, "--initrd", o.initrd,
                                "--vm-memory-mib", std::to_string(o.vm_memory_mib),
                                "--vcpus", std::to_string(o.vcpus),
                                "--timeout-ms", std::to_string(o.timeout_ms),
                                "--guest-timeout-ms", std::to_string(r.timeout_ms),
                                "--memory", std::to_string(r.memory_bytes),
                                "--pids", std::to_string(r.pids),
                                "--cpu-millicores", std::to_string(r.cpu_millicores),
                                "--kill-grace-ms", std::to_string(r.kill_grace_ms),
                                "--cwd", r.cwd};
  if (!o.files_from.empty()) a.insert(a.end(), {"--files-from", o.files_from});
  a.push_back("--");
  a.insert(a.end(), r.argv.begin(), r.argv.end());
  return a;
}

expected<vm_options> parse_vm_options(const std::vector<std::string>& args) {
  vm_options o;
  guest_request& r = o.request;
  std::size_t i = 0;
  for (; i < args.size() && args[i] != "--"; i += 2) {
    const std::string& flag = args[i];
    static const char* const known[] = {"--vmm", "--kernel", "--initrd", "--files-from", "--cwd",
                                        "--vm-memory-mib", "--vcpus", "--timeout-ms", "--guest-timeout-ms",
                                        "--memory", "--pids", "--cpu-millicores", "--kill-grace-ms"};
    if (std::find(std::begin(known), std::end(known), flag) == std::end(known))
      return make_failure(failure_kind::invalid_request, "unknown option " + flag);
    if (i + 1 >= args.size()) return make_failure(failure_kind::invalid_request, flag + " needs a value");
    const std::string& v = args[i + 1];
    auto num = [&](auto& field) -> bool {
      auto n = number(flag, v);
      if (!n) return false;
      field = static_cast<std::remove_reference_t<decltype(field)>>(*n);
      return true;
    };
    bool ok = true;
    if (flag == "--vmm") o.vmm = v;
    else if (flag == "--kernel") o.kernel = v;
    else if (flag == "--initrd") o.initrd = v;
    else if (flag == "--files-from") o.files_from = v;
    else if (flag == "--cwd") r.cwd = v;
    else if (flag == "--vm-memory-mib") ok = num(o.vm_memory_mib);
    else if (flag == "--vcpus") ok = num(o.vcpus);
    else if (flag == "--timeout-ms") ok = num(o.timeout_ms);
    else if (flag == "--guest-timeout-ms") ok = num(r.timeout_ms);
    else if (flag == "--memory") ok = num(r.memory_bytes);
    else if (flag == "--pids") ok = num(r.pids);
    else if (flag == "--cpu-millicores") ok = num(r.cpu_millicores);
    else if (flag == "--kill-grace-ms") ok = num(r.kill_grace_ms);
    else return make_failure(failure_kind::invalid_request, "unknown option " + flag);
    if (!ok) return make_failure(failure_kind::invalid_request, flag + " needs a number, got '" + v + "'");
  }
  if (i >= args.size()) return make_failure(failure_kind::invalid_request, "no -- before the guest program");
  r.argv.assign(args.begin() + static_cast<long>(i) + 1, args.end());
  if (r.argv.empty()) return make_failure(failure_kind::invalid_request, "no guest program after --");
  for (auto* p : {&o.vmm, &o.kernel, &o.initrd})
    if (p->empty() || p->front() != '/')
      return make_failure(failure_kind::invalid_request, "--vmm, --kernel and --initrd need absolute paths");
  if (r.cwd.empty() || r.cwd.front() != '/') return make_failure(failure_kind::invalid_request, "--cwd needs an absolute guest path");
  if (o.vcpus == 0 || o.vm_memory_mib < kGuestFloorMiB)
    return make_failure(failure_kind::invalid_request, "--vcpus must be at least 1 and --vm-memory-mib at least " +
                                                           std::to_string(kGuestFloorMiB));
  return o;
}

std::vector<std::string> vmm_argv(const vm_options& o) {
  return {o.vmm,
          // microvm: no PCI, no firmware ROMs, no legacy devices but the one serial port.
          "-M", "microvm,x-option-roms=off,isa-serial=on,rtc=off",
          "-enable-kvm",
          // host minus two features a nested or software KVM may not virtualize
          // (ARCH_CAPABILITIES cannot be set; cmpxchg16b is not emulated); the guest
          // kernel has a fallback for both.
          "-cpu", "host,-arch-capabilities,-cx16",
          "-m", std::to_string(o.vm_memory_mib),
          "-smp", std::to_string(o.vcpus),
          "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
          "-kernel", o.kernel, "-initrd", o.initrd, "-append", kCmdline,
          // The agent's channel is QEMU's stdin/stdout; signal=off keeps a ^C byte data.
          "-chardev", "stdio,id=agent,signal=off", "-serial", "chardev:agent"};
}

expected<std::vector<guest_file>> read_scratch_files(const std::string& dir) {
  std::vector<guest_file> files;
  if (dir.empty()) return files;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return make_failure(failure_kind::spawn_failed, "opendir " + dir + ": " + std::strerror(errno));
  std::uint64_t total = 0;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    int fd = ::openat(::dirfd(d), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
      if (fd >= 0) ::close(fd);
      continue;  // only plain files travel: the source file of a --code or --file request
    }
    total += static_cast<std::uint64_t>(st.st_size);
    if (files.size() >= kMaxScratchFiles || total > kMaxScratchBytes) {
      ::close(fd);
      ::closedir(d);
      return make_failure(failure_kind::limit_exceeded, "the scratch dir " + dir + " holds more than " +
                                                            std::to_string(kMaxScratchFiles) + " files or " +
                                                            std::to_string(kMaxScratchBytes) + " bytes");
    }
    guest_file f{name, static_cast<std::uint32_t>(st.st_mode & 0777), {}};
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) f.content.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    files.push_back(std::move(f));
  }
  ::closedir(d);
  return files;
}

} // namespace corral
