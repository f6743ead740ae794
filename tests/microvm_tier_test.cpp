// The microvm tier: its preflight with stand-in VMMs (missing, hung, wrong), the
// launcher and the guest agent speaking their protocol (the agent run on this host by a
// stand-in VMM: the real programs, no VM), and whole executions in a real micro-VM when
// KVM and the image (scripts/build-microvm-image) are present; otherwise those skip and
// say why.
#include <csignal>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "runtime_fixture.hpp"
#include "tiers/microvm/guest_protocol.hpp"
#include "tiers/microvm/vm_options.hpp"
#include "tiers/microvm_tier.hpp"
#include "tiers/preflight.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

std::string script(const temp_dir& dir, const std::string& name, const std::string& body) {
  auto path = dir / name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

long read_pid(const std::string& path) {
  long pid = 0;
  std::ifstream(path) >> pid;
  return pid;
}

bool gone(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0; }

// Bounded: a process the test expects to vanish gets a few seconds, not forever.
bool gone_soon(long pid) {
  for (int i = 0; i < 500 && !gone(pid); ++i) std::this_thread::sleep_for(10ms);
  return gone(pid);
}

std::string kvm_skip_reason() {
  if (::access("/dev/kvm", R_OK | W_OK) != 0) return "/dev/kvm is not accessible";
  return "";
}

microvm_settings settings_with(const std::string& vmm, const temp_dir& dir) {
  microvm_settings s;
  s.vmm = vmm;
  s.kernel = dir / "vmlinux";
  s.rootfs = dir / "initramfs.cpio";
  std::ofstream(s.kernel) << "k";
  std::ofstream(s.rootfs) << "r";
  s.launcher = CORRAL_TEST_MICROVM;
  return s;
}

// A stand-in VMM: answers the machine probe like QEMU, and "boots" by running the real
// agent on this host over stdin/stdout. Everything but the VM itself is real.
std::string stand_in_vmm(const temp_dir& dir) {
  return script(dir, "qemu-system-x86_64",
                "case \"$*\" in *'-machine help'*) echo 'microvm  microvm (i386)'; exit 0;; esac\n"
                "exec '" CORRAL_TEST_MICROVM_AGENT "' --channel-stdio");
}

// The profile for executions in a real micro-VM, from the image scripts/build-microvm-image
// wrote into the build tree.
profile vm_profile() {
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
std::string vm_skip_reason() {
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

launched run_launcher(const std::vector<std::string>& args, const std::string& cwd, const std::string& input = "") {
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

// The options the tier would write, pointed at a stand-in VMM.
std::vector<std::string> launcher_args(const std::string& vmm, std::vector<std::string> argv,
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

} // namespace

TEST_CASE("guest protocol frames survive any bytes and reject corrupt lengths", "[microvm][protocol]") {
  guest_request r;
  r.argv = {"/bin/sh", "-c", std::string("a\0b\xff", 4)};
  r.envp = {"A=1"};
  r.cwd = "/work";
  r.timeout_ms = 1234;
  r.memory_bytes = 64 * kMiB;
  r.files = {{"main.py", 0600, std::string(5000, '\n')}};
  frame_reader in;
  auto bytes = encode_frame(frame_type::request, encode_request(r)) + encode_frame(frame_type::input_end, "");
  in.feed(bytes.data(), 3);  // a partial header is not a frame yet
  auto none = in.next();
  REQUIRE(none);
  CHECK_FALSE(*none);
  in.feed(bytes.data() + 3, bytes.size() - 3);
  auto f = in.next();
  REQUIRE(f);
  REQUIRE(*f);
  auto back = decode_request((*f)->payload);
  REQUIRE(back);
  CHECK(back->argv == r.argv);
  CHECK(back->files.at(0).content == r.files[0].content);
  CHECK(back->memory_bytes == r.memory_bytes);
  auto end = in.next();
  REQUIRE(end);
  REQUIRE(*end);
  CHECK((*end)->type == frame_type::input_end);

  frame_reader bad;
  std::string huge = "O\xff\xff\xff\x7f";
  bad.feed(huge.data(), huge.size());
  CHECK_FALSE(bad.next());
  CHECK_FALSE(decode_request(std::string("\x05\x00\x00\x00", 4)));  // 5 strings announced, none there
}

TEST_CASE("microvm preflight says what is missing, within its deadline", "[microvm][preflight]") {
  if (auto why = kvm_skip_reason(); !why.empty()) {
    WARN("skipped: " << why << " (every later check needs KVM first)");
    return;
  }
  temp_dir dir;
  SECTION("a missing VMM") {
    auto st = microvm_tier(settings_with(dir / "no-such-qemu", dir), CORRAL_TEST_MICROVM, 1s).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("was not found") != std::string::npos);
  }
  SECTION("a VMM that is not QEMU") {
    auto vmm = script(dir, "firecracker", "echo firecracker");
    auto st = microvm_tier(settings_with(vmm, dir), CORRAL_TEST_MICROVM, 1s).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("not QEMU") != std::string::npos);
  }
  SECTION("a hung VMM is killed at the deadline") {
    auto pidfile = dir / "pid";
    auto vmm = script(dir, "qemu-system-x86_64", "echo $$ > " + pidfile + "; exec sleep 60");
    microvm_tier tier(settings_with(vmm, dir), CORRAL_TEST_MICROVM, 500ms);
    auto st = tier.available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("did not answer within 500 ms") != std::string::npos);
    long pid = read_pid(pidfile);
    REQUIRE(pid > 0);     // the probe ran
    CHECK(gone_soon(pid));  // and was not left behind
    launch_request req;
    req.argv = {"/bin/true"};
    auto plan = tier.plan(req, lease_grant{});
    REQUIRE_FALSE(plan);
    CHECK(plan.error().kind == failure_kind::tier_unavailable);
  }
  SECTION("a QEMU without the microvm machine") {
    auto vmm = script(dir, "qemu-system-x86_64", "echo 'pc  Standard PC'");
    auto st = microvm_tier(settings_with(vmm, dir), CORRAL_TEST_MICROVM, 2s).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("no microvm machine") != std::string::npos);
  }
  SECTION("no image configured, or a missing image file") {
    auto vmm = script(dir, "qemu-system-x86_64", "echo 'microvm  microvm (i386)'");
    auto s = settings_with(vmm, dir);
    s.kernel.clear();
    auto st = microvm_tier(s, CORRAL_TEST_MICROVM, 2s).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("no guest image") != std::string::npos);
    s = settings_with(vmm, dir);
    s.rootfs = dir / "missing.cpio";
    st = microvm_tier(s, CORRAL_TEST_MICROVM, 2s).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("missing.cpio") != std::string::npos);
  }
  SECTION("a VMM that answers but never boots the guest") {
    auto pidfile = dir / "pid";
    auto vmm = script(dir, "qemu-system-x86_64",
                      "case \"$*\" in *'-machine help'*) echo 'microvm  microvm'; exit 0;; esac\n"
                      "echo $$ > " + pidfile + "; echo 'KVM internal error. Suberror: 1' >&2; exec sleep 60");
    auto st = microvm_tier(settings_with(vmm, dir), CORRAL_TEST_MICROVM, 1s).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("test boot") != std::string::npos);
    CHECK(st.reason.find("did not finish within 1000 ms") != std::string::npos);
    CHECK(gone_soon(read_pid(pidfile)));  // the stuck VMM is not left behind
  }
  SECTION("no launcher") {
    auto vmm = script(dir, "qemu-system-x86_64", "echo 'microvm  microvm (i386)'");
    auto st = microvm_tier(settings_with(vmm, dir), dir / "no-launcher", 2s).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("corral-microvm") != std::string::npos);
  }
}

TEST_CASE("the launcher and the guest agent carry a whole execution", "[microvm][channel]") {
  temp_dir dir;
  // The stand-in VMM runs the real agent on this host over stdin/stdout: no VM, so this
  // checks the protocol and both programs, not isolation.
  auto vmm = stand_in_vmm(dir);
  temp_dir work;
  std::ofstream(work / "main.sh") << "echo from-the-scratch-file\n";

  SECTION("stdout, stderr, stdin, environment, scratch files and the exit status") {
    auto args = launcher_args(vmm, {"/bin/sh", "-c", "cat; echo to-stderr >&2; echo $GREETING; sh main.sh; exit 7"});
    args.insert(args.begin(), {"--files-from", work.path()});
    auto r = run_launcher(args, work.path(), "line from stdin\n");
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 7);
    CHECK(r.out == "line from stdin\nhello\nfrom-the-scratch-file\n");
    CHECK(r.err == "to-stderr\n");
  }
  SECTION("the request's environment reaches the program, never the VMM on the host") {
    auto envfile = dir / "vmm-env";
    auto spy = script(dir, "qemu-system-x86_64", "env > '" + envfile + "'\nexec '" CORRAL_TEST_MICROVM_AGENT "' --channel-stdio");
    auto r = run_launcher(launcher_args(spy, {"/bin/sh", "-c", "echo $GREETING"}), work.path());
    CHECK(r.out == "hello\n");
    std::ifstream f(envfile);
    std::string vmm_env(std::istreambuf_iterator<char>(f), {});
    CHECK(vmm_env.find("PATH=") != std::string::npos);  // the spy really ran
    CHECK(vmm_env.find("GREETING") == std::string::npos);
  }
  SECTION("binary output passes byte for byte") {
    auto r = run_launcher(launcher_args(vmm, {"/bin/sh", "-c", "head -c 300000 /dev/urandom | tee out.bin"}), work.path());
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 0);
    std::ifstream f(work / "out.bin", std::ios::binary);
    std::string written(std::istreambuf_iterator<char>(f), {});
    CHECK(written.size() == 300000);
    CHECK(r.out == written);
  }
  SECTION("a signal is mirrored") {
    auto r = run_launcher(launcher_args(vmm, {"/bin/sh", "-c", "kill -TERM $$"}), work.path());
    REQUIRE(WIFSIGNALED(r.status));
    CHECK(WTERMSIG(r.status) == SIGTERM);
  }
  SECTION("the agent's own deadline ends the program and all it started") {
    auto pidfile = work / "sleeper";
    auto r = run_launcher(launcher_args(vmm, {"/bin/sh", "-c", "sleep 60 & echo $! > " + pidfile + "; wait"}, 20'000, 300),
                          work.path());
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 124);
    CHECK(r.err.find("at its timeout") != std::string::npos);
    long pid = read_pid(pidfile);
    REQUIRE(pid > 0);  // the background sleep really started
    CHECK(gone_soon(pid));
  }
  SECTION("a program that cannot be found") {
    auto r = run_launcher(launcher_args(vmm, {"/no/such/program"}), work.path());
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 127);
    CHECK(r.err.find("/no/such/program") != std::string::npos);
  }
}

TEST_CASE("the launcher fails closed when the VM misbehaves", "[microvm][channel]") {
  temp_dir dir, work;
  SECTION("the VM stops before the agent starts: 125 and what it printed") {
    auto vmm = script(dir, "qemu-system-x86_64", "echo 'Kernel panic - not syncing: test'; exit 1");
    auto r = run_launcher(launcher_args(vmm, {"/bin/true"}), work.path());
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 125);
    CHECK(r.err.find("before the guest agent started") != std::string::npos);
    CHECK(r.err.find("Kernel panic") != std::string::npos);
  }
  SECTION("a VM that never answers is killed at the launcher's deadline") {
    auto pidfile = dir / "vmm";
    auto vmm = script(dir, "qemu-system-x86_64", "echo $$ > " + pidfile + "; exec sleep 60");
    auto r = run_launcher(launcher_args(vmm, {"/bin/true"}, 500, 500), work.path());
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 124);
    CHECK(r.err.find("did not finish within 500 ms") != std::string::npos);
    CHECK(gone_soon(read_pid(pidfile)));
  }
  SECTION("a corrupt frame stream is an error, not output") {
    auto vmm = script(dir, "qemu-system-x86_64", "printf '\\n#corral-agent-v1#\\nGARBAGE'; sleep 1");
    auto r = run_launcher(launcher_args(vmm, {"/bin/true"}), work.path());
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 125);
    CHECK(r.out.empty());
    CHECK(r.err.find("unknown frame type") != std::string::npos);
  }
}

TEST_CASE("microvm executions through the runtime, with the stand-in VMM", "[microvm][runtime]") {
  if (auto why = kvm_skip_reason(); !why.empty()) {
    WARN("skipped: " << why);
    return;
  }
  temp_dir dir;
  profile p;
  p.tier = "microvm";
  p.microvm = settings_with(stand_in_vmm(dir), dir);
  p.limit.kill_grace = 200ms;
  test_runtime t(p, false);  // no host opt-in: the microvm tier needs none
  SECTION("exit status, output and the tier reported") {
    auto req = shell("echo out; echo err >&2; exit 3");
    auto r = t.run(req);
    REQUIRE(r);
    CHECK(r->exit_code == 3);
    CHECK(r->out.data == "out\n");
    CHECK(r->err.data == "err\n");
    CHECK(r->tier == "microvm");
    CHECK(r->isolation.find("microvm") != std::string::npos);
  }
  SECTION("stdin reaches the program and a signal is reported as one") {
    auto req = shell("cat; kill -KILL $$");
    req.stdin_data = std::string("through the channel\n");
    auto r = t.run(req);
    REQUIRE(r);
    CHECK(r->out.data == "through the channel\n");
    CHECK(r->how == verdict::signaled);
    CHECK(r->term_signal == SIGKILL);
  }
  SECTION("the runtime's timeout ends the launcher, the VMM and the program") {
    auto pidfile = dir / "sleeper";
    auto req = shell("sleep 60 & echo $! > " + pidfile + "; wait");
    req.timeout = 1500ms;
    auto r = t.run(req);
    REQUIRE(r);
    CHECK(r->how == verdict::timed_out);
    long pid = read_pid(pidfile);
    REQUIRE(pid > 0);
    CHECK(gone_soon(pid));
    CHECK(tracked_after_settling(*t.rt) == 0);
  }
}

TEST_CASE("a real micro-VM runs a program and reports how it ended", "[microvm][vm]") {
  VM_CASE_OR_SKIP();
  test_runtime t(vm_profile(), false);
  SECTION("exit status, stdout and stderr, inside a guest kernel") {
    auto r = t.run(shell("echo out; echo err >&2; uname -r; exit 3"));
    REQUIRE(r);
    CHECK(r->exit_code == 3);
    CHECK(r->out.data.rfind("out\n", 0) == 0);
    CHECK(r->out.data.find("cloud-amd64") != std::string::npos);  // the guest's kernel, not the host's
    CHECK(r->err.data == "err\n");
  }
  SECTION("the guest has no network device and cannot see the host's files") {
    auto r = t.run(shell("ls /sys/class/net; test -e /etc/shadow && echo shadow; test -e /work/../usr/bin/python3 && echo py"));
    REQUIRE(r);
    CHECK(r->out.data == "lo\n");  // loopback only: no NIC exists to reach anything
  }
  SECTION("the timeout ends it") {
    auto req = shell("sleep 600");
    req.timeout = 20'000ms;
    auto r = t.run(req);
    REQUIRE(r);
    CHECK(r->how == verdict::timed_out);
    CHECK(tracked_after_settling(*t.rt) == 0);
  }
  SECTION("the memory limit holds inside the guest") {
    // tail keeps a line that never ends: it grows until the guest cgroup's limit stops it.
    auto req = shell("exec tail < /dev/zero");
    req.memory_limit_bytes = 32 * kMiB;
    auto r = t.run(req);
    REQUIRE(r);
    CHECK(r->term_signal == SIGKILL);
    CHECK(r->err.data.find("out of memory") != std::string::npos);
  }
}

namespace {

// Real QEMU, the real image and agent, but TCG instead of KVM: this machine's KVM cannot
// boot the guest, TCG can (slowly). The wrapper rewrites the tier's argv for TCG, which
// has no kvm-clock and cannot calibrate the TSC without a PIT reference, hence the fixed
// frequency. It records QEMU's pid so the test can check it is gone afterwards.
std::string tcg_vmm(const temp_dir& dir, const std::string& pidfile) {
  return script(dir, "qemu-tcg",
                "echo $$ > '" + pidfile + "'\n"
                "for a in \"$@\"; do\n"
                "  shift\n"
                "  case \"$a\" in\n"
                "    -enable-kvm) set -- \"$@\" -accel tcg ;;\n"
                "    host,-arch-capabilities,-cx16) set -- \"$@\" max ;;\n"
                "    console=ttyS0*) set -- \"$@\" \"$a tsc_early_khz=2000000 lpj=4000000\" ;;\n"
                "    *) set -- \"$@\" \"$a\" ;;\n"
                "  esac\n"
                "done\n"
                "exec qemu-system-x86_64 \"$@\"");
}

std::string tcg_skip_reason() {
  if (find_on_path("qemu-system-x86_64").empty()) return "qemu-system-x86_64 is not installed";
  struct stat st {};
  if (::stat(CORRAL_TEST_MICROVM_IMAGE "/vmlinux", &st) != 0 || ::stat(CORRAL_TEST_MICROVM_IMAGE "/initramfs.cpio", &st) != 0)
    return "no guest image in " CORRAL_TEST_MICROVM_IMAGE " (run scripts/build-microvm-image)";
  return "";
}

std::vector<std::string> tcg_args(const std::string& vmm, std::vector<std::string> argv, guest_request limits) {
  vm_options o;
  o.vmm = vmm;
  o.kernel = CORRAL_TEST_MICROVM_IMAGE "/vmlinux";
  o.initrd = CORRAL_TEST_MICROVM_IMAGE "/initramfs.cpio";
  o.vm_memory_mib = vm_memory_for(limits.memory_bytes ? limits.memory_bytes : 128 * kMiB);
  o.timeout_ms = 240'000;  // TCG boots in seconds to tens of seconds on a loaded machine
  o.request = std::move(limits);
  o.request.argv = std::move(argv);
  o.request.cwd = "/work";
  if (!o.request.timeout_ms) o.request.timeout_ms = 120'000;
  return to_launcher_args(o);
}

} // namespace

TEST_CASE("the guest agent in a real guest kernel (QEMU TCG, no KVM needed)", "[microvm][tcg]") {
  if (auto why = tcg_skip_reason(); !why.empty()) {
    WARN("skipped: " << why);
    return;
  }
  temp_dir dir, work;
  auto qemu_pid = dir / "qemu.pid";
  auto vmm = tcg_vmm(dir, qemu_pid);
  std::ofstream(work / "main.sh") << "echo from-the-scratch-file\n";

  SECTION("output, stdin, env, scratch files, nobody, no NIC, limits in the guest cgroup") {
    guest_request limits;
    limits.memory_bytes = 64 * kMiB;
    limits.pids = 32;
    auto args = tcg_args(vmm, {"/bin/sh", "-c",
                               "cat; echo $GREETING; sh main.sh; id -u; ls /sys/class/net; "
                               "cat /sys/fs/cgroup/job/memory.max /sys/fs/cgroup/job/pids.max; "
                               "test -e /etc/shadow || echo no-host-files; echo to-stderr >&2; exit 5"},
                         limits);
    args.insert(args.begin(), {"--files-from", work.path()});
    auto r = run_launcher(args, work.path(), "stdin line\n");
    INFO(r.err);
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 5);
    CHECK(r.out == "stdin line\nhello\nfrom-the-scratch-file\n65534\nlo\n67108864\n32\nno-host-files\n");
    CHECK(r.err == "to-stderr\n");
  }
  SECTION("the memory limit: the guest's OOM killer ends the program, the agent reports it") {
    guest_request limits;
    limits.memory_bytes = 32 * kMiB;
    auto r = run_launcher(tcg_args(vmm, {"/bin/sh", "-c", "exec tail < /dev/zero"}, limits), work.path());
    INFO(r.err);
    REQUIRE(WIFSIGNALED(r.status));
    CHECK(WTERMSIG(r.status) == SIGKILL);
    CHECK(r.err.find("out of memory") != std::string::npos);
  }
  SECTION("the pids limit stops a fork bomb's growth") {
    guest_request limits;
    limits.pids = 4;
    auto r = run_launcher(tcg_args(vmm, {"/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8; do sleep 30 & done; wait"}, limits),
                          work.path());
    INFO(r.err);
    CHECK(r.err.find("can't fork") != std::string::npos);
  }
  SECTION("the agent's timeout ends the program inside the guest") {
    guest_request limits;
    limits.timeout_ms = 2000;
    auto r = run_launcher(tcg_args(vmm, {"/bin/sh", "-c", "sleep 100 & sleep 100"}, limits), work.path());
    INFO(r.err);
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 124);
    CHECK(r.err.find("at its timeout") != std::string::npos);
  }
  // Whatever happened, QEMU is gone once the launcher has exited.
  long pid = read_pid(qemu_pid);
  REQUIRE(pid > 0);
  CHECK(gone_soon(pid));
}
