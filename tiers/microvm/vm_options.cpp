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

constexpr std::uint64_t kGuestOverheadMiB = 96;         // kernel, initramfs, agent
constexpr std::uint64_t kGuestFloorMiB = 128;

// Kernel command line. Why each word:
//   console=ttyS0 loglevel=1  the serial console: only a panic or an agent that cannot
//                             open its channel prints there (the launcher keeps it)
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

std::uint64_t vm_memory_for(std::uint64_t program_memory_bytes, std::uint64_t image_bytes) {
  auto mib = [](std::uint64_t bytes) { return (bytes + (1ull << 20) - 1) >> 20; };
  return std::max<std::uint64_t>(kGuestFloorMiB, mib(program_memory_bytes) + kGuestOverheadMiB + mib(image_bytes));
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
  if (r.tty) a.insert(a.end(), {"--tty", "1"});
  for (auto& t : o.trees) a.insert(a.end(), {"--tree", std::string(t.writable ? "rw" : "ro") + ":" + t.guest + ":" + t.host});
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
    static const char* const known[] = {"--vmm", "--kernel", "--initrd", "--tree", "--tty", "--cwd",
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
    else if (flag == "--tree") {
      // MODE:GUEST:HOST, split at the first two colons (a guest path has none).
      auto a = v.find(':'), b = a == std::string::npos ? a : v.find(':', a + 1);
      std::string mode = v.substr(0, a);
      if (b == std::string::npos || (mode != "ro" && mode != "rw"))
        return make_failure(failure_kind::invalid_request, "--tree needs ro|rw:GUEST:HOST, got '" + v + "'");
      host_tree t{v.substr(b + 1), v.substr(a + 1, b - a - 1), mode == "rw"};
      if (t.host.empty() || t.host.front() != '/' || !safe_guest_path(t.guest))
        return make_failure(failure_kind::invalid_request, "--tree needs an absolute host path and a plain absolute "
                                                           "guest path, got '" + v + "'");
      o.trees.push_back(std::move(t));
    }
    else if (flag == "--cwd") r.cwd = v;
    else if (flag == "--tty") r.tty = v == "1";
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
          // The agent's channel: a virtio-serial port on QEMU's stdin/stdout (signal=off
          // keeps a ^C byte data). The serial port would cost a VM exit per byte.
          "-chardev", "stdio,id=agent,signal=off",
          "-device", "virtio-serial-device",
          "-device", std::string("virtserialport,chardev=agent,name=") + kChannelPortName,
          // The console (kernel messages, an agent that cannot open its channel) on the
          // descriptor the launcher gives QEMU as fd 3, to explain a VM that died early.
          "-chardev", "file,id=console,path=/dev/fd/3", "-serial", "chardev:console"};
}

namespace {

struct tree_reader {
  guest_request& request;
  std::uint32_t tree;
  std::uint64_t bytes = 0;

  status too_big(const std::string& root) {
    return make_failure(failure_kind::limit_exceeded,
                        "the microvm tier copies " + root + " into the VM, and the trees hold more than " +
                            std::to_string(kMaxTreeEntries) + " entries or " + std::to_string(kMaxTreeBytes >> 20) +
                            " MiB together; grant a smaller root or use another tier");
  }

  // Reads the directory `dir` (an open fd, consumed) as `prefix`'s contents.
  status walk(int dir, const std::string& prefix, const std::string& root) {
    DIR* d = ::fdopendir(dir);
    if (!d) {
      ::close(dir);
      return make_failure(failure_kind::spawn_failed, "cannot read " + root + "/" + prefix + ": " + std::strerror(errno));
    }
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
    std::sort(names.begin(), names.end());  // the same tree always gives the same request
    for (auto& name : names) {
      auto path = prefix.empty() ? name : prefix + "/" + name;
      struct stat st {};
      if (::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) continue;  // gone meanwhile
      guest_file f{tree, path, entry_kind::file, static_cast<std::uint32_t>(st.st_mode & 0777), 0, {}};
      if (S_ISDIR(st.st_mode)) f.kind = entry_kind::directory;
      else if (S_ISLNK(st.st_mode)) f.kind = entry_kind::symlink;
      else if (!S_ISREG(st.st_mode)) continue;  // sockets, fifos, devices: nothing a copy can hold
      if (request.files.size() >= kMaxTreeEntries) {
        ::closedir(d);
        return too_big(root);
      }
      if (f.kind == entry_kind::symlink) {
        char target[4096];
        ssize_t n = ::readlinkat(::dirfd(d), name.c_str(), target, sizeof target);
        if (n < 0) continue;
        f.content.assign(target, static_cast<std::size_t>(n));
      } else if (f.kind == entry_kind::file) {
        if (bytes + static_cast<std::uint64_t>(st.st_size) > kMaxTreeBytes) {
          ::closedir(d);
          return too_big(root);
        }
        int fd = ::openat(::dirfd(d), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
          ::closedir(d);
          return make_failure(failure_kind::spawn_failed, "cannot read " + root + "/" + path + ": " + std::strerror(errno));
        }
        char buf[65536];
        ssize_t n;
        while ((n = ::read(fd, buf, sizeof buf)) > 0 && bytes + f.content.size() + static_cast<std::size_t>(n) <= kMaxTreeBytes)
          f.content.append(buf, static_cast<std::size_t>(n));
        ::close(fd);
        if (n > 0) {  // it grew past the bound while being read
          ::closedir(d);
          return too_big(root);
        }
        bytes += f.content.size();
      }
      bool descend = f.kind == entry_kind::directory;
      request.files.push_back(std::move(f));
      if (descend) {
        int sub = ::openat(::dirfd(d), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) continue;
        if (auto r = walk(sub, path, root); !r) {
          ::closedir(d);
          return r;
        }
      }
    }
    ::closedir(d);
    return ok();
  }
};

} // namespace

status read_trees(const std::vector<host_tree>& trees, guest_request& request) {
  request.trees.clear();
  request.files.clear();
  std::uint64_t bytes = 0;
  for (auto& t : trees) {
    request.trees.push_back({t.guest, t.writable});
    int root = ::open(t.host.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
      return make_failure(failure_kind::spawn_failed, "cannot open the root " + t.host + ": " + std::strerror(errno));
    tree_reader reader{request, static_cast<std::uint32_t>(request.trees.size() - 1), bytes};
    if (auto r = reader.walk(root, "", t.host); !r) return r;
    bytes = reader.bytes;
  }
  return ok();
}

} // namespace corral
