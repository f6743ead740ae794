// Helpers shared by the microvm tests: stand-in VMM scripts, the launcher run as a
// child with its exit status, and the skip reasons of the cases that need KVM or the image.
#pragma once

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "runtime_fixture.hpp"
#include "tiers/microvm/vm_options.hpp"
#include "tiers/microvm/microvm_tier.hpp"
#include "tiers/external/preflight.hpp"

namespace corral::testing::microvm {

using namespace std::chrono_literals;

inline std::string script(const temp_dir& dir, const std::string& name, const std::string& body) {
  auto path = dir / name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

inline long read_pid(const std::string& path) {
  long pid = 0;
  std::ifstream(path) >> pid;
  return pid;
}

inline bool gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0; }

// Bounded: a process the test expects to vanish gets a few seconds, not forever.
inline bool gone_soon(long pid) {
  for (int i = 0; i < 500 && !gone(pid); ++i) std::this_thread::sleep_for(10ms);
  return gone(pid);
}

inline std::string kvm_skip_reason() {
  if (::access("/dev/kvm", R_OK | W_OK) != 0) return "/dev/kvm is not accessible";
  return "";
}

inline microvm_settings settings_with(const std::string& vmm, const temp_dir& dir) {
  microvm_settings s;
  s.vmm = vmm;
  s.kernel = dir / "vmlinux";
  s.rootfs = dir / "initramfs.cpio";
  std::ofstream(s.kernel) << "k";
  std::ofstream(s.rootfs) << "r";
  s.launcher = CORRAL_TEST_MICROVM;
  // A stand-in VMM needs no KVM: a file stands in for the device the preflight checks.
  s.kvm_device = dir / "kvm";
  std::ofstream(s.kvm_device) << "";
  return s;
}

// A stand-in VMM: answers the machine probe like QEMU, and "boots" by running the real
// agent on this host over stdin/stdout. Everything but the VM itself is real.
inline std::string stand_in_vmm(const temp_dir& dir) {
  return script(dir, "qemu-system-x86_64",
                "case \"$*\" in *'-machine help'*) echo 'microvm  microvm (i386)'; exit 0;; esac\n"
                "exec '" CORRAL_TEST_MICROVM_AGENT "' --channel-stdio");
}

// The profile for executions in a real micro-VM, from the image scripts/build-microvm-image
// wrote into the build tree.
inline profile vm_profile() {
  profile p;
  p.tier = "microvm";
  p.microvm.kernel = std::string(CORRAL_TEST_MICROVM_IMAGE) + "/vmlinux";
  p.microvm.rootfs = std::string(CORRAL_TEST_MICROVM_IMAGE) + "/initramfs.cpio";
  p.microvm.launcher = CORRAL_TEST_MICROVM;
  p.limit.timeout = std::chrono::milliseconds(60'000);
  return p;
}

// Empty when a real micro-VM can run here; otherwise why not (the tier's own preflight,
// which boots the guest once).
inline std::string vm_skip_reason() {
  if (auto why = kvm_skip_reason(); !why.empty()) return why;
  auto p = vm_profile();
  struct stat st {};
  if (::stat(p.microvm.kernel.c_str(), &st) != 0)
    return "no guest image in " CORRAL_TEST_MICROVM_IMAGE " (run scripts/build-microvm-image)";
  auto status = microvm_tier(p.microvm, p.microvm.launcher, 3000ms).available();
  return status.available ? "" : status.reason;
}

#define VM_CASE_OR_SKIP()                       \
  do {                                          \
    static const auto why = vm_skip_reason();   \
    if (!why.empty()) {                         \
      WARN("skipped: " << why);                 \
      return;                                   \
    }                                           \
  } while (0)



// Runs the launcher with `args`, stdin from `input`; returns the wait status.
struct launched {
  int status = 0;
  std::string out, err;
};

inline launched run_launcher(const std::vector<std::string>& args, const std::string& cwd, const std::string& input = "") {
  temp_dir io;
  std::ofstream(io / "in") << input;
  // The launcher's environment is the guest's: only what the test gives it.
  std::string cmd = "cd '" + cwd + "' && exec env -i GREETING=hello '" CORRAL_TEST_MICROVM "'";
  for (auto& a : args) cmd += " '" + a + "'";
  cmd += " <'" + io / "in" + "' >'" + io / "out" + "' 2>'" + io / "err" + "'";
  launched r;
  r.status = std::system(cmd.c_str());
  std::ifstream o(io / "out"), e(io / "err");
  r.out.assign(std::istreambuf_iterator<char>(o), {});
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  return r;
}

// Real QEMU, the real image and agent, but TCG instead of KVM: this machine's KVM cannot
// boot the guest, TCG can (slowly). The wrapper rewrites the tier's argv for TCG, which
// has no kvm-clock and cannot calibrate the TSC without a PIT reference, hence the fixed
// frequency. It records QEMU's pid so the test can check it is gone afterwards.
// `more_cases` adds shell case arms that rewrite further arguments.
inline std::string tcg_vmm(const temp_dir& dir, const std::string& pidfile, const std::string& more_cases = "") {
  return script(dir, "qemu-tcg",
                "echo $$ > '" + pidfile + "'\n"
                "for a in \"$@\"; do\n"
                "  shift\n"
                "  case \"$a\" in\n" + more_cases +
                "    -enable-kvm) set -- \"$@\" -accel tcg ;;\n"
                "    host,-arch-capabilities,-cx16) set -- \"$@\" max ;;\n"
                "    console=ttyS0*) set -- \"$@\" \"$a tsc_early_khz=2000000 lpj=4000000\" ;;\n"
                "    *) set -- \"$@\" \"$a\" ;;\n"
                "  esac\n"
                "done\n"
                "exec qemu-system-x86_64 \"$@\"");
}

inline std::string tcg_skip_reason() {
  if (find_on_path("qemu-system-x86_64").empty()) return "qemu-system-x86_64 is not installed";
  struct stat st {};
  if (::stat(CORRAL_TEST_MICROVM_IMAGE "/vmlinux", &st) != 0 || ::stat(CORRAL_TEST_MICROVM_IMAGE "/initramfs.cpio", &st) != 0)
    return "no guest image in " CORRAL_TEST_MICROVM_IMAGE " (run scripts/build-microvm-image)";
  return "";
}

// A profile whose microvm tier boots the real image under TCG (the wrapper above as its
// VMM, a file as its KVM device): every part of the tier runs but KVM itself. Boots take
// seconds to tens of seconds there, so the test boot and the timeout are generous.
inline profile tcg_profile(const temp_dir& dir) {
  profile p;
  p.tier = "microvm";
  p.microvm = settings_with(tcg_vmm(dir, dir / "qemu.pid"), dir);
  p.microvm.kernel = CORRAL_TEST_MICROVM_IMAGE "/vmlinux";
  p.microvm.rootfs = CORRAL_TEST_MICROVM_IMAGE "/initramfs.cpio";
  p.microvm.boot_deadline = std::chrono::milliseconds(180'000);
  p.limit.timeout = std::chrono::milliseconds(180'000);
  return p;
}

// The launcher on a pty of 30x100, as a terminal session runs it: `drive` gets the pty's
// master and what was read so far, to type and resize; the launcher is killed if it has
// not ended `bound` after `drive` returns.
struct on_pty {
  int status = -1;
  std::string screen;
};

class pty_screen {
public:
  explicit pty_screen(int master) : master_(master), reader_([this] { read_all(); }) {}
  ~pty_screen() { reader_.join(); }
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }
  bool shows(const std::string& what, std::chrono::milliseconds bound = 60'000ms) {
    return eventually([&] { return text().find(what) != std::string::npos; }, bound);
  }

private:
  void read_all() {
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(master_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // EIO: every slave descriptor is closed
      std::lock_guard<std::mutex> lock(mutex_);
      text_.append(buf, static_cast<std::size_t>(n));
    }
  }
  int master_;
  std::mutex mutex_;
  std::string text_;
  std::thread reader_;
};

inline on_pty run_launcher_on_pty(const std::vector<std::string>& args, const std::string& cwd,
                                  const std::function<void(int, pty_screen&)>& drive,
                                  std::chrono::milliseconds bound = 60'000ms) {
  winsize ws{};
  ws.ws_row = 30;
  ws.ws_col = 100;
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, &ws);
  if (pid == 0) {
    std::vector<char*> argv = {const_cast<char*>(CORRAL_TEST_MICROVM)};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    char path[] = "PATH=/usr/bin:/bin";
    char* env[] = {path, nullptr};
    if (::chdir(cwd.c_str()) == 0) ::execve(argv[0], argv.data(), env);
    ::_exit(127);
  }
  on_pty r;
  if (pid < 0) return r;
  {
    pty_screen screen(master);
    drive(master, screen);
    bool ended = eventually([&] { return ::waitpid(pid, &r.status, WNOHANG) == pid; }, bound);
    if (!ended) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &r.status, 0);
    }
    r.screen = screen.text();
  }  // the reader has seen EIO: the launcher and everything on the pty are gone
  ::close(master);
  return r;
}

// The three trees of a tree test: the scratch dir as /work, a source root as /src and an
// output root as /out, ahead of the other options.
inline void add_trees(std::vector<std::string>& args, const std::string& work, const std::string& src,
                      const std::string& out) {
  args.insert(args.begin(), {"--tree", "rw:/work:" + work, "--tree", "ro:/src:" + src, "--tree", "rw:/out:" + out});
}

// The options the tier would write, pointed at a stand-in VMM.
inline std::vector<std::string> launcher_args(const std::string& vmm, std::vector<std::string> argv,
                                       std::uint64_t timeout_ms = 20'000, std::uint64_t guest_timeout_ms = 10'000) {
  vm_options o;
  o.vmm = vmm;
  o.kernel = "/nonexistent/vmlinux";  // the stand-in boots nothing
  o.initrd = "/nonexistent/initramfs.cpio";
  o.timeout_ms = timeout_ms;
  o.request.argv = std::move(argv);
  o.request.cwd = "/work";
  o.request.timeout_ms = guest_timeout_ms;
  return to_launcher_args(o);
}


} // namespace corral::testing::microvm
