// The microvm tier: the guest protocol alone, the preflight with stand-in VMMs (missing,
// hung, wrong), executions through the runtime with a stand-in VMM that runs the real
// agent on this host, and whole executions in a real micro-VM when KVM and the image
// (scripts/build-microvm-image) are present; otherwise those skip and say why.
#include <catch2/catch.hpp>

#include "microvm_fixture.hpp"
#include "tiers/microvm/guest_protocol.hpp"
#include "tiers/external/preflight.hpp"

using namespace corral;
using namespace corral::testing;
using namespace corral::testing::microvm;
using namespace std::chrono_literals;

TEST_CASE("microvm preflight says what is missing, within its deadline", "[microvm][preflight]") {
  temp_dir dir;
  SECTION("no KVM device") {
    auto s = settings_with(script(dir, "qemu-system-x86_64", "echo 'microvm  microvm (i386)'"), dir);
    s.kvm_device = dir / "no-kvm";
    auto st = microvm_tier(s, CORRAL_TEST_MICROVM, 1s).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find(dir / "no-kvm" + " is missing") != std::string::npos);
  }
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

TEST_CASE("microvm executions through the runtime, with the stand-in VMM", "[microvm][runtime]") {
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
  SECTION("the request's cwd, relative to the guest's /work, is where the program starts") {
    auto req = shell("pwd");
    req.cwd = ".";
    auto r = t.run(req);
    REQUIRE(r);
    CHECK_THAT(r->out.data, Catch::EndsWith("/work\n"));  // the stand-in maps /work to a host dir
    req.cwd = "missing";
    auto lost = t.run(req);
    INFO((lost ? lost->err.data : lost.error().message));
    CHECK((!lost || lost->exit_code != 0));
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

TEST_CASE("microvm roots and sources through the runtime, with the stand-in VMM", "[microvm][runtime]") {
  temp_dir dir, src, out;
  std::ofstream(src / "in.txt") << "source\n";
  std::ofstream(out / "old.txt") << "old\n";
  profile p;
  p.tier = "microvm";
  p.microvm = settings_with(stand_in_vmm(dir), dir);
  p.source_roots = {{src.path(), "/src", false}};
  p.output_roots = {{out.path(), "/out", true}};
  test_runtime t(p, false);
  SECTION("the tier's plan copies both roots in and the output root's changes back") {
    // Outside a VM the stand-in places guest paths below the scratch dir: ../src is /src.
    auto r = t.run(shell("cat ../src/in.txt; echo made > ../out/made.txt; rm ../out/old.txt"));
    REQUIRE(r);
    INFO(r->err.data);
    CHECK(r->exit_code == 0);
    CHECK(r->out.data == "source\n");
    CHECK(read_text(out / "made.txt") == "made\n");
    CHECK_FALSE(exists(out / "old.txt"));
    CHECK(r->isolation.find("3 trees") != std::string::npos);  // scratch, source, output
  }
  SECTION("a language request finds its source file in the guest's working directory") {
    exec_request req;
    req.language = "python";
    req.code = "print(6 * 7)";
    auto r = t.run(req);
    REQUIRE(r);
    INFO(r->err.data);
    CHECK(r->out.data == "42\n");
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

