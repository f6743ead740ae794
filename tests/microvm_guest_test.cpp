// The launcher and the guest agent: their protocol over a stand-in VMM (the agent on
// this host, no VM), the launcher failing closed when the VM misbehaves, and the agent in
// a real guest kernel under QEMU's TCG accelerator, which needs no KVM.
#include <catch2/catch.hpp>

#include "microvm_fixture.hpp"
#include "tiers/microvm/guest_protocol.hpp"
#include "tiers/preflight.hpp"

using namespace corral;
using namespace corral::testing;
using namespace corral::testing::microvm;
using namespace std::chrono_literals;

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
