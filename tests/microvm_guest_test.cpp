// The launcher and the guest agent: their protocol over a stand-in VMM (the agent on
// this host, no VM), the launcher failing closed when the VM misbehaves, and the agent in
// a real guest kernel under QEMU's TCG accelerator, which needs no KVM.
#include <catch2/catch.hpp>

#include "microvm_fixture.hpp"
#include "tiers/microvm/guest_protocol.hpp"
#include "tiers/external/preflight.hpp"

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
    args.insert(args.begin(), {"--tree", "rw:/work:" + work.path()});
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
    auto args = launcher_args(vmm, {"/bin/sh", "-c", "head -c 300000 /dev/urandom | tee out.bin"});
    args.insert(args.begin(), {"--tree", "rw:/work:" + work.path()});  // out.bin comes back to the scratch dir
    auto r = run_launcher(args, work.path());
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

namespace {

// A terminal request on the launcher's pty: the program sees a terminal of the pty's size,
// typed input arrives (echoed once, by the guest's pty), and a resize reaches it.
void check_terminal(std::vector<std::string> args, const std::string& cwd) {
  auto r = run_launcher_on_pty(args, cwd, [](int master, pty_screen& screen) {
    if (!screen.shows("is-a-tty")) return;  // the checks below say what the screen showed
    winsize ws{};
    ws.ws_row = 40;
    ws.ws_col = 120;
    ::ioctl(master, TIOCSWINSZ, &ws);  // SIGWINCH to the launcher, a resize frame to the guest
    std::this_thread::sleep_for(500ms);
    REQUIRE(::write(master, "hello\r", 6) == 6);
    CHECK(screen.shows("got:hello"));
  });
  INFO(r.screen);
  REQUIRE(WIFEXITED(r.status));
  CHECK(WEXITSTATUS(r.status) == 3);
  CHECK(r.screen.find("30 100") != std::string::npos);  // the size it started with
  CHECK(r.screen.find("40 120") != std::string::npos);  // and the one it was given
  CHECK(r.screen.find("got:hello") != std::string::npos);
}

const std::vector<std::string> kTerminalProgram = {
    "/bin/sh", "-c", "stty size; test -t 0 && test -t 1 && echo is-a-tty; read line; echo got:$line; stty size; exit 3"};

} // namespace

TEST_CASE("a terminal request gets a pty in the guest of the caller's size and is resized with it", "[microvm][channel]") {
  temp_dir dir, work;
  auto args = launcher_args(stand_in_vmm(dir), kTerminalProgram);
  args.insert(args.begin(), {"--tty", "1"});
  SECTION("typed input, the size, a resize") { check_terminal(args, work.path()); }
  SECTION("without a terminal on stdin, --tty is refused") {
    auto r = run_launcher(args, work.path());
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 125);
    CHECK(r.err.find("--tty needs a terminal") != std::string::npos);
  }
}

TEST_CASE("trees are copied in, and what the program changed in writable ones comes back", "[microvm][channel]") {
  temp_dir dir, work, src, out;
  auto vmm = stand_in_vmm(dir);
  ::mkdir((src / "sub").c_str(), 0755);
  std::ofstream(src / "sub/in.txt") << "from-the-source-root\n";
  ::symlink("sub/in.txt", (src / "link").c_str());
  std::ofstream(out / "keep.txt") << "kept\n";
  std::ofstream(out / "old.txt") << "to be removed\n";
  std::ofstream(out / "edit.txt") << "before\n";
  ::mkdir((out / "olddir").c_str(), 0755);
  // Outside a VM guest paths sit below the stand-in's working directory (the scratch
  // dir), so the program reaches them relative to its cwd, <scratch>/work.
  auto args = launcher_args(vmm, {"/bin/sh", "-c",
                                  "cat ../src/sub/in.txt; cat ../src/link; "
                                  "echo changed > ../src/sub/in.txt; "  // not enforced outside a VM; never comes back
                                  "echo new > ../out/new.txt; mkdir -p ../out/d/e; echo deep > ../out/d/e/deep.txt; "
                                  "echo after > ../out/edit.txt; rm ../out/old.txt; rmdir ../out/olddir; "
                                  "head -c 3000000 /dev/urandom > ../out/big.bin; ln -s /etc/passwd ../out/escape; "
                                  "echo result > result.txt"});
  add_trees(args, work.path(), src.path(), out.path());
  auto r = run_launcher(args, work.path());
  INFO(r.err);
  REQUIRE(WIFEXITED(r.status));
  CHECK(WEXITSTATUS(r.status) == 0);
  CHECK(r.out == "from-the-source-root\nfrom-the-source-root\n");
  CHECK(read_text(out / "new.txt") == "new\n");
  CHECK(read_text(out / "d/e/deep.txt") == "deep\n");
  CHECK(read_text(out / "edit.txt") == "after\n");
  CHECK(read_text(out / "keep.txt") == "kept\n");
  CHECK_FALSE(exists(out / "old.txt"));
  CHECK_FALSE(exists(out / "olddir"));
  // Past one frame: the file travels in chunks and arrives whole.
  CHECK(read_text(out / "big.bin").size() == 3000000);
  CHECK(read_text(out / "big.bin") == read_text(work / "out/big.bin"));
  // A symlink made by the program stays in the guest, and says so.
  struct stat st {};
  CHECK(::lstat((out / "escape").c_str(), &st) != 0);
  CHECK(r.err.find("were not copied back") != std::string::npos);
  // The read-only tree is never written back, whatever happened to its copy.
  CHECK(read_text(src / "sub/in.txt") == "from-the-source-root\n");
  CHECK(read_text(work / "result.txt") == "result\n");
}

namespace {

// A VMM whose "guest" sends the given frames after the marker: a hostile agent.
std::string hostile_vmm(const temp_dir& dir, const std::vector<std::pair<frame_type, std::string>>& frames) {
  std::string bytes = kAgentMarker + encode_frame(frame_type::ready, "");
  for (auto& [type, payload] : frames) bytes += encode_frame(type, payload);
  bytes += encode_frame(frame_type::exit, encode_exit({}));
  std::ofstream(dir / "frames.bin", std::ios::binary) << bytes;
  return script(dir, "qemu-system-x86_64", "cat '" + dir / "frames.bin" + "'; exec sleep 30");
}

std::string written(std::uint32_t tree, const std::string& path, const std::string& content,
                    entry_kind kind = entry_kind::file) {
  return encode_file({tree, path, kind, 0644, 0, content});
}

} // namespace

TEST_CASE("a hostile guest cannot write outside its output root", "[microvm][channel][escape]") {
  temp_dir dir, work, src, out, outside;
  std::ofstream(outside / "target.txt") << "original\n";
  ::symlink(outside.path().c_str(), (out / "dirlink").c_str());                  // planted on the host
  ::symlink((outside / "target.txt").c_str(), (out / "filelink").c_str());
  auto run = [&](const std::vector<std::pair<frame_type, std::string>>& frames) {
    auto args = launcher_args(hostile_vmm(dir, frames), {"/bin/true"});
    args.insert(args.begin(), {"--tree", "rw:/out:" + out.path(), "--tree", "ro:/src:" + src.path()});
    return run_launcher(args, work.path());
  };
  auto refused = [](const launched& r, const std::string& why) {
    INFO(r.err);
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 125);       // the frame was read and refused ...
    CHECK(r.err.find(why) != std::string::npos);
  };
  SECTION("a path climbing out") {
    refused(run({{frame_type::written, written(0, "../escaped.txt", "x")}}), "not a plain relative path");
    CHECK_FALSE(exists(out / "../escaped.txt"));  // ... and nothing was written
  }
  SECTION("through a directory symlink on the host") {
    refused(run({{frame_type::written, written(0, "dirlink/planted.txt", "x")}}), "without following a link");
    CHECK_FALSE(exists(outside / "planted.txt"));
  }
  SECTION("through a file symlink on the host") {
    refused(run({{frame_type::written, written(0, "filelink", "overwritten")}}), "was not written back");
    CHECK(read_text(outside / "target.txt") == "original\n");
  }
  SECTION("removing through a symlink") {
    refused(run({{frame_type::removed, written(0, "dirlink/target.txt", "")}}), "without following a link");
    CHECK(exists(outside / "target.txt"));
  }
  SECTION("into a read-only tree") {
    refused(run({{frame_type::written, written(1, "planted.txt", "x")}}), "read-only");
    CHECK_FALSE(exists(src / "planted.txt"));
  }
  SECTION("a tree that does not exist") {
    refused(run({{frame_type::written, written(9, "planted.txt", "x")}}), "does not exist");
  }
  SECTION("a symlink pointing out") {
    refused(run({{frame_type::written, written(0, "made-link", "/etc/shadow", entry_kind::symlink)}}), "symlinks");
    struct stat st {};
    CHECK(::lstat((out / "made-link").c_str(), &st) != 0);
  }
  SECTION("a well-formed entry still lands, so the refusals above are about the paths") {
    auto r = run({{frame_type::written, written(0, "fine.txt", "fine")}});
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 0);
    CHECK(read_text(out / "fine.txt") == "fine");
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

std::vector<std::string> tcg_args(const std::string& vmm, std::vector<std::string> argv, guest_request limits) {
  vm_options o;
  o.vmm = vmm;
  o.kernel = CORRAL_TEST_MICROVM_IMAGE "/vmlinux";
  o.initrd = CORRAL_TEST_MICROVM_IMAGE "/initramfs.cpio";
  struct stat image {};
  ::stat(o.initrd.c_str(), &image);
  o.vm_memory_mib = vm_memory_for(limits.memory_bytes ? limits.memory_bytes : 128 * kMiB, static_cast<std::uint64_t>(image.st_size));
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
    args.insert(args.begin(), {"--tree", "rw:/work:" + work.path()});
    auto r = run_launcher(args, work.path(), "stdin line\n");
    INFO(r.err);
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 5);
    CHECK(r.out == "stdin line\nhello\nfrom-the-scratch-file\n65534\nlo\n67108864\n32\nno-host-files\n");
    CHECK(r.err == "to-stderr\n");
  }
  SECTION("a source root is read-only in the guest; an output root and the scratch dir come back") {
    temp_dir src, out;
    std::ofstream(src / "in.txt") << "source\n";
    std::ofstream(out / "old.txt") << "old\n";
    auto args = tcg_args(vmm, {"/bin/sh", "-c",
                               "cat /src/in.txt; echo x > /src/in.txt || echo src-refused; "
                               "touch /src/new || echo src-new-refused; "
                               "echo made > /out/made.txt; rm /out/old.txt; echo scratch > result.txt"},
                         {});
    add_trees(args, work.path(), src.path(), out.path());
    auto r = run_launcher(args, work.path());
    INFO(r.err);
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 0);
    CHECK(r.out == "source\nsrc-refused\nsrc-new-refused\n");  // the writes ran and failed
    CHECK(r.err.find("Read-only file system") != std::string::npos);
    CHECK(read_text(src / "in.txt") == "source\n");
    CHECK_FALSE(exists(src / "new"));
    CHECK(read_text(out / "made.txt") == "made\n");
    CHECK_FALSE(exists(out / "old.txt"));
    CHECK(read_text(work / "result.txt") == "scratch\n");
  }
  SECTION("8 MiB of output and 1 MiB of binary stdin pass whole through the virtio channel") {
    std::string input;
    for (int i = 0; i < (1 << 20); ++i) input += static_cast<char>((i * 7 + i / 256) & 0xff);
    guest_request limits;
    limits.memory_bytes = 64 * kMiB;
    auto r = run_launcher(tcg_args(vmm, {"/bin/sh", "-c", "cat; head -c 8388608 /dev/zero | tr -c x x"}, limits),
                          work.path(), input);
    INFO(r.err);
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 0);
    REQUIRE(r.out.size() == input.size() + (8u << 20));
    CHECK(r.out.compare(0, input.size(), input) == 0);
    CHECK(r.out.find_first_not_of('x', input.size()) == std::string::npos);
  }
  SECTION("a reader that falls behind loses nothing: the guest stays up until its last frame is read") {
    // The launcher's stdout stalls for 5 s while the program writes 4 MiB and exits:
    // QEMU holds what the launcher cannot take yet, and the guest must not power off
    // with the exit frame still queued in it.
    temp_dir io;
    auto args = tcg_args(vmm, {"/bin/sh", "-c", "head -c 4194304 /dev/zero; echo done >&2"}, {});
    std::string cmd = "cd '" + work.path() + "' && { '" CORRAL_TEST_MICROVM "'";
    for (auto& a : args) cmd += " '" + a + "'";
    cmd += " </dev/null 2>'" + io / "err" + "'; echo \"status $?\" >'" + io / "status" + "'; } | { sleep 5; cat >'" +
           io / "out" + "'; }";
    REQUIRE(std::system(cmd.c_str()) == 0);
    INFO(read_text(io / "err"));
    CHECK(read_text(io / "status") == "status 0\n");
    CHECK(read_text(io / "out").size() == 4u << 20);
    CHECK(read_text(io / "err") == "done\n");
  }
  SECTION("the program can neither open the agent's channel nor write to the console") {
    auto r = run_launcher(tcg_args(vmm, {"/bin/sh", "-c",
                                         "cat /sys/class/virtio-ports/*/name; for d in /dev/vport*; do echo try $d; "
                                         "echo forged > $d && echo opened $d; done; "
                                         "echo forged > /dev/ttyS0 && echo console-written; exit 0"},
                                  {}),
                          work.path());
    INFO(r.out << r.err);
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 0);
    CHECK(r.out.find("corral\ntry /dev/vport") == 0);  // the attempt ran, on the real port
    CHECK(r.out.find("opened") == std::string::npos);
    CHECK(r.out.find("console-written") == std::string::npos);
    CHECK(r.err.find("Permission denied") != std::string::npos);
  }
  SECTION("python3 and its standard library are in the image") {
    // run_launcher quotes each argument in '…' for its shell: the code uses "…" only.
    auto r = run_launcher(tcg_args(vmm, {"python3", "-c",
                                         "import json, sqlite3, hashlib, os; "
                                         "print(json.dumps({\"uid\": os.getuid(), \"sum\": hashlib.sha256(b\"x\").hexdigest()[:8], "
                                         "\"sql\": sqlite3.connect(\":memory:\").execute(\"select 6*7\").fetchone()[0]}))"},
                                  {}),
                          work.path());
    INFO(r.err);
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 0);
    CHECK(r.out == "{\"uid\": 65534, \"sum\": \"2d711642\", \"sql\": 42}\n");
  }
  SECTION("a terminal request: a pty in the guest kernel, resized") {
    guest_request terminal;
    terminal.tty = true;
    check_terminal(tcg_args(vmm, kTerminalProgram, terminal), work.path());
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
  SECTION("an agent that finds no channel says so on the serial console, and the launcher shows it") {
    // The VMM offers the port under another name: the agent waits for its own, then
    // reports on the console and powers off.
    auto renamed = tcg_vmm(dir, qemu_pid, "    virtserialport,*) set -- \"$@\" virtserialport,chardev=agent,name=other ;;\n");
    auto r = run_launcher(tcg_args(renamed, {"/bin/true"}, {}), work.path());
    INFO(r.err);
    REQUIRE(WIFEXITED(r.status));
    CHECK(WEXITSTATUS(r.status) == 125);
    CHECK(r.err.find("the VM stopped before the guest agent started") != std::string::npos);
    CHECK(r.err.find("the guest printed: corral-microvm-agent: no virtio-serial port named 'corral'") != std::string::npos);
  }
  // Whatever happened, QEMU is gone once the launcher has exited.
  long pid = read_pid(qemu_pid);
  REQUIRE(pid > 0);
  CHECK(gone_soon(pid));
}
