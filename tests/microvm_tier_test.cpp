// The microvm tier: the guest protocol alone, the preflight with stand-in VMMs (missing,
// hung, wrong), executions through the runtime with a stand-in VMM that runs the real
// agent on this host, and whole executions in a real micro-VM when KVM and the image
// (scripts/build-microvm-image) are present; otherwise those skip and say why.
#include <catch2/catch.hpp>

#include "microvm_fixture.hpp"
#include "tiers/microvm/guest_protocol.hpp"
#include "tiers/preflight.hpp"

using namespace corral;
using namespace corral::testing;
using namespace corral::testing::microvm;
using namespace std::chrono_literals;

TEST_CASE("guest protocol frames survive any bytes and reject corrupt lengths", "[microvm][protocol]") {
  guest_request r;
  r.argv = {"/bin/sh", "-c", std::string("a\0b\xff", 4)};
  r.envp = {"A=1"};
  r.cwd = "/work";
  r.timeout_ms = 1234;
  r.memory_bytes = 64 * kMiB;
  r.trees = {{"/work", true}, {"/src", false}};
  r.files = {{0, "main.py", entry_kind::file, 0600, 0, std::string(5000, '\n')},
             {1, "lib", entry_kind::directory, 0755, 0, {}},
             {1, "lib/link", entry_kind::symlink, 0777, 0, "../main.py"}};
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
  REQUIRE(back->trees.size() == 2);
  CHECK_FALSE(back->trees[1].writable);
  CHECK(back->files.at(2).path == "lib/link");
  CHECK(back->files.at(2).kind == entry_kind::symlink);
  CHECK(back->files.at(2).content == "../main.py");
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

  // The agent refuses a request whose trees or entries would leave their place.
  for (std::string evil : std::vector<std::string>{"../x", "a/../../x", "/etc/passwd", "a//b", "./a", "", std::string("a\0b", 3)}) {
    INFO(evil);
    CHECK_FALSE(safe_relative_path(evil));
    auto bad_entry = r;
    bad_entry.files[0].path = evil;
    CHECK_FALSE(decode_request(encode_request(bad_entry)));
  }
  for (std::string evil : {"/", "work", "/work/..", "/a/./b", "//x"}) {
    INFO(evil);
    auto bad_tree = r;
    bad_tree.trees[0].path = evil;
    CHECK_FALSE(decode_request(encode_request(bad_tree)));
  }
  auto bad_index = r;
  bad_index.files[0].tree = 7;
  CHECK_FALSE(decode_request(encode_request(bad_index)));
  CHECK(safe_relative_path("a/b.c/..d"));

  guest_file chunk{1, "dir/f", entry_kind::file, 0640, 1u << 20, "bytes"};
  auto file_back = decode_file(encode_file(chunk));
  REQUIRE(file_back);
  CHECK(file_back->offset == chunk.offset);
  CHECK(file_back->path == chunk.path);
  CHECK_FALSE(decode_file(encode_file(chunk).substr(3)));
}

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

TEST_CASE("the launcher's command line round-trips and refuses what it does not know", "[microvm][protocol]") {
  vm_options o;
  o.vmm = "/usr/bin/qemu-system-x86_64";
  o.kernel = "/img/vmlinux";
  o.initrd = "/img/initramfs.cpio";
  o.vm_memory_mib = vm_memory_for(64 * kMiB);
  o.vcpus = 2;
  o.timeout_ms = 5000;
  o.request.argv = {"/bin/sh", "-c", "echo --vmm"};  // after --, flags are the program's
  o.request.cwd = "/work";
  o.request.memory_bytes = 64 * kMiB;
  o.request.cpu_millicores = 1500;
  auto back = parse_vm_options(to_launcher_args(o));
  REQUIRE(back);
  CHECK(back->request.argv == o.request.argv);
  CHECK(back->vm_memory_mib == 160);  // the limit plus the guest's own 96 MiB
  CHECK(back->request.cpu_millicores == 1500);
  CHECK(back->request.envp.empty());  // the environment never rides on the command line
  CHECK_FALSE(parse_vm_options({"--bogus", "1", "--", "/bin/true"}));
  CHECK_FALSE(parse_vm_options({"--vmm", "relative/qemu", "--kernel", "/k", "--initrd", "/i", "--cwd", "/w", "--", "x"}));
  CHECK_FALSE(parse_vm_options({"--vmm", "/q", "--kernel", "/k", "--initrd", "/i", "--cwd", "/w"}));  // no program
  CHECK_FALSE(parse_vm_options({"--vmm", "/q", "--kernel", "/k", "--initrd", "/i", "--cwd", "/w", "--pids", "x1", "--", "x"}));

  o.trees = {{"/host/scratch", "/work", true}, {"/host/with:colon", "/src", false}};
  auto with_trees = parse_vm_options(to_launcher_args(o));
  REQUIRE(with_trees);
  REQUIRE(with_trees->trees.size() == 2);
  CHECK(with_trees->trees[1].host == "/host/with:colon");
  CHECK(with_trees->trees[1].guest == "/src");
  CHECK_FALSE(with_trees->trees[1].writable);
  for (std::string bad : {"rx:/a:/b", "rw:/a", "rw:a:/b", "rw:/a:b", "ro:/../a:/b"}) {
    INFO(bad);
    CHECK_FALSE(parse_vm_options({"--vmm", "/q", "--kernel", "/k", "--initrd", "/i", "--cwd", "/w", "--tree", bad, "--", "x"}));
  }
}

TEST_CASE("the launcher reads a tree within its bounds", "[microvm][protocol]") {
  temp_dir src;
  ::mkdir((src / "sub").c_str(), 0750);
  std::ofstream(src / "sub/a.txt") << "alpha";
  ::symlink("sub/a.txt", (src / "link").c_str());
  ::mkfifo((src / "fifo").c_str(), 0600);  // nothing a copy can hold: left out
  guest_request r;
  REQUIRE(read_trees({{src.path(), "/src", false}}, r));
  REQUIRE(r.files.size() == 3);
  CHECK(r.files[0].path == "link");
  CHECK(r.files[0].kind == entry_kind::symlink);
  CHECK(r.files[0].content == "sub/a.txt");
  CHECK(r.files[1].path == "sub");
  CHECK(r.files[1].mode == 0750);
  CHECK(r.files[2].path == "sub/a.txt");
  CHECK(r.files[2].content == "alpha");

  SECTION("a tree over the bound is refused with what to do") {
    std::ofstream(src / "big", std::ios::binary) << std::string(kMaxTreeBytes + 1, 'x');
    auto big = read_trees({{src.path(), "/src", false}}, r);
    REQUIRE_FALSE(big);
    CHECK(big.error().kind == failure_kind::limit_exceeded);
    CHECK(big.error().message.find("grant a smaller root") != std::string::npos);
  }
  SECTION("a missing root is an error") {
    CHECK_FALSE(read_trees({{src / "nope", "/src", false}}, r));
  }
}
