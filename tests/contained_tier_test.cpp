// The contained tier on the host: the escape cases that can hold without namespaces, each
// asserting from outside that the attempt ran and that it failed, and the ones that cannot
// hold asserted to be reported in not_enforced. tests/contained_in_container_test.cpp
// runs the same tier inside a restricted container.
#include <arpa/inet.h>
#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <csignal>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "config/network_rule.hpp"
#include "runtime_fixture.hpp"
#include "tiers/contained/contained_tier.hpp"
#include "tiers/contained/enclosing_cgroup.hpp"
#include "tiers/contained/split_grants.hpp"
#include "tiers/kernel_features.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

std::string contained_unavailable() {
  contained_tier t(profile{}, detect_kernel_features());
  auto st = t.available();
  return st.available ? "" : st.reason;
}

#define REQUIRE_CONTAINED()                                                      \
  do {                                                                           \
    auto why = contained_unavailable();                                          \
    if (!why.empty()) {                                                          \
      WARN("skipped: the contained tier is unavailable here: " << why);          \
      return;                                                                    \
    }                                                                            \
  } while (0)

void write_text(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
}

// A contained runtime with a read-only source root and a writable output root (each
// granted at its host path: this tier cannot move them) and a world-readable secret beside
// them that no grant covers: only the boundary keeps it from the program.
struct contained_fixture {
  temp_dir host{"corral-contained-"};
  std::string src, out, outside, secret;
  std::unique_ptr<test_runtime> t;

  explicit contained_fixture(network_mode network = network_mode::none, bool git_in_out = false) {
    // The program may run as nobody: it must reach the roots and its scratch dir by path.
    ::chmod(host.path().c_str(), 0755);
    src = host / "src";
    out = host / "out";
    outside = host / "outside";
    for (auto& d : {src, out, outside}) ::mkdir(d.c_str(), 0755);
    ::chmod(out.c_str(), 0777);
    ::chmod(outside.c_str(), 0777);
    secret = outside + "/secret";
    write_text(secret, "hunter2-secret\n");
    write_text(src + "/granted.txt", "granted\n");
    profile p;
    p.tier = "contained";
    p.network = network;
    if (network == network_mode::allowlist) p.egress.allow.push_back(*parse_network_rule("example.test", rule_list::allow));
    p.limit.kill_grace = 200ms;
    p.source_roots.push_back({src, src, false});
    p.output_roots.push_back({out, out, true});
    if (git_in_out) {
      ::mkdir((out + "/.git").c_str(), 0777);
      ::chmod((out + "/.git").c_str(), 0777);  // only the boundary refuses, not the mode
      ::mkdir((out + "/sub").c_str(), 0777);
      ::chmod((out + "/sub").c_str(), 0777);
      write_text(out + "/.git/config", "[core]\n", 0666);
      p.masks.push_back({out + "/.git", out + "/.git", mask_kind::read_only, "a .git directory"});
      write_text(out + "/.env", "TOKEN=hunter2-env-file\n", 0666);
      p.masks.push_back({out + "/.env", out + "/.env", mask_kind::hidden, "a listed protected path"});
    }
    t = std::make_unique<test_runtime>(p, false);
    // The test's temp dir is 0700 (mkdtemp): a root runtime's programs run as nobody.
    ::chmod((t->state.path()).c_str(), 0711);
  }

  exec_result run(exec_request r) {
    if (!r.timeout) r.timeout = 20s;
    auto res = t->run(r);
    if (!res) FAIL("exec failed: " << res.error().describe());
    return *res;
  }
  exec_result sh(const std::string& code, std::chrono::milliseconds timeout = 20s) {
    auto r = shell(code);
    r.timeout = timeout;
    return run(r);
  }
  exec_result python(const std::string& code) {
    exec_request r;
    r.language = "python";
    r.code = code;
    return run(r);
  }
};

bool listed(const std::vector<std::string>& items, const std::string& prefix) {
  for (auto& i : items)
    if (i.rfind(prefix, 0) == 0) return true;
  return false;
}

} // namespace

TEST_CASE("the contained tier runs programs and says what it does not hold", "[contained]") {
  REQUIRE_CONTAINED();
  contained_fixture f;
  auto r = f.sh("cat " + f.src + "/granted.txt; pwd; echo $TMPDIR; id -u");
  CHECK(r.exit_code == 0);
  CHECK(r.out.data.find("granted\n") == 0);
  CHECK(r.isolation.rfind("contained:", 0) == 0);
  // The landlock tier's guarantees this tier cannot give are named, not passed silently.
  CHECK(listed(r.not_enforced, "process_visibility"));
  CHECK(listed(r.not_enforced, "memory_limit"));
  CHECK(listed(r.not_enforced, "pids_limit"));
  CHECK(listed(r.not_enforced, "private_tmp"));
  // A root runtime's program is nobody, never root.
  if (::geteuid() == 0) CHECK(r.out.data.find("\n65534\n") != std::string::npos);
}

TEST_CASE("contained: a secret outside every grant cannot be read", "[contained][escape]") {
  REQUIRE_CONTAINED();
  contained_fixture f;
  auto r = f.python("import os\nfor p in ['" + f.secret + "', '/proc/1/root" + f.secret + "', '/etc/shadow', '" +
                    f.outside + "']:\n"
                    "    try:\n        print('READ', open(p).read() if not os.path.isdir(p) else os.listdir(p))\n"
                    "    except OSError as e:\n        print('denied', p, e.errno)\n");
  CHECK(r.out.data.find("denied " + f.secret) != std::string::npos);  // the attempt ran
  CHECK(r.out.data.find("denied " + f.outside) != std::string::npos);
  CHECK(r.out.data.find("hunter2") == std::string::npos);             // and failed
  CHECK(r.out.data.find("READ") == std::string::npos);
}

TEST_CASE("contained: nothing outside the output roots can be written", "[contained][escape]") {
  REQUIRE_CONTAINED();
  contained_fixture f;
  auto marker = f.outside + "/marker";
  auto r = f.sh("for p in " + marker + " " + f.src + "/marker /tmp/corral-contained-marker /var/tmp/marker; do "
                "if echo x > $p; then echo WROTE $p; else echo refused $p; fi; done 2>/dev/null; "
                "echo ok > " + f.out + "/written; echo ok > $TMPDIR/private && echo private");
  CHECK(r.out.data.find("refused " + marker) != std::string::npos);
  CHECK(r.out.data.find("WROTE") == std::string::npos);
  CHECK_FALSE(exists(marker));
  CHECK_FALSE(exists(f.src + "/marker"));
  CHECK_FALSE(exists("/tmp/corral-contained-marker"));
  CHECK(read_text(f.out + "/written") == "ok\n");
  CHECK(r.out.data.find("private") != std::string::npos);
}

TEST_CASE("contained: links cannot lead out of a granted directory", "[contained][escape]") {
  REQUIRE_CONTAINED();
  contained_fixture f;
  REQUIRE(::symlink(f.secret.c_str(), (f.src + "/escape").c_str()) == 0);
  auto r = f.sh("cat " + f.src + "/escape && echo READ1; "
                "ln -s " + f.secret + " " + f.out + "/link; cat " + f.out + "/link && echo READ2; "
                "if ln " + f.secret + " " + f.out + "/hard 2>/dev/null; then echo LINKED; else echo nolink; fi; "
                "if ln /etc/passwd " + f.out + "/pw 2>/dev/null; then echo LINKED; else echo nolink; fi");
  CHECK(r.out.data.find("hunter2") == std::string::npos);
  CHECK(r.out.data.find("READ") == std::string::npos);
  CHECK(r.out.data.find("nolink\nnolink") != std::string::npos);
  CHECK_FALSE(exists(f.out + "/hard"));
  CHECK_FALSE(exists(f.out + "/pw"));
}

TEST_CASE("contained: a TCP listener and a unix socket on the host cannot be reached", "[contained][escape][network]") {
  REQUIRE_CONTAINED();
  contained_fixture f;
  int tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto addr = testing::bind_loopback(tcp);
  REQUIRE(::listen(tcp, 4) == 0);
  int port = ntohs(addr.sin_port);
  // A unix socket anyone may connect to, by path, as a daemon's would be.
  std::string path = f.host / "daemon.sock";
  int unix_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un ua{};
  ua.sun_family = AF_UNIX;
  std::strncpy(ua.sun_path, path.c_str(), sizeof ua.sun_path - 1);
  REQUIRE(::bind(unix_fd, reinterpret_cast<sockaddr*>(&ua), sizeof ua) == 0);
  ::chmod(path.c_str(), 0777);
  REQUIRE(::listen(unix_fd, 4) == 0);
  auto r = f.python("import socket\n"
                    "for fam, typ, addr in [(socket.AF_INET, socket.SOCK_STREAM, ('127.0.0.1', " + std::to_string(port) +
                    ")), (socket.AF_INET, socket.SOCK_DGRAM, ('127.0.0.1', " + std::to_string(port) +
                    ")), (socket.AF_INET6, socket.SOCK_STREAM, ('::1', " + std::to_string(port) +
                    ")), (socket.AF_UNIX, socket.SOCK_STREAM, '" + path + "')]:\n"
                    "    try:\n        s = socket.socket(fam, typ)\n        s.settimeout(2)\n        s.connect(addr)\n"
                    "        s.send(b'x')\n        print('CONNECTED', addr)\n"
                    "    except OSError as e:\n        print('refused', addr, e.errno)\n"
                    "try:\n    s = socket.socket()\n    s.listen(1)\n    print('LISTENING', s.getsockname())\n"
                    "except OSError as e:\n    print('no listen', e.errno)\n");
  pollfd p[2] = {{tcp, POLLIN, 0}, {unix_fd, POLLIN, 0}};
  int pending = ::poll(p, 2, 200);
  ::close(tcp);
  ::close(unix_fd);
  CHECK(r.out.data.find("refused ('127.0.0.1'") != std::string::npos);
  CHECK(r.out.data.find("refused " + path) != std::string::npos);
  CHECK(r.out.data.find("no listen") != std::string::npos);
  CHECK(r.out.data.find("CONNECTED") == std::string::npos);
  CHECK(r.out.data.find("LISTENING") == std::string::npos);
  CHECK(pending == 0);  // nothing reached either listener
}

TEST_CASE("contained: the allow-list reaches the proxy and nothing else", "[contained][escape][network]") {
  REQUIRE_CONTAINED();
  contained_fixture f{network_mode::allowlist};
  int tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto addr = testing::bind_loopback(tcp);
  REQUIRE(::listen(tcp, 4) == 0);
  int port = ntohs(addr.sin_port);
  // The program is told the proxy is at 127.0.0.1:3128; the broker connects it to the real
  // listener. The same port elsewhere, and the host listener, stay out of reach.
  auto r = f.python("import os, socket\n"
                    "s = socket.create_connection(('127.0.0.1', 3128), timeout=5)\n"
                    "s.sendall(b'CONNECT denied.test:443 HTTP/1.1\\r\\nHost: denied.test:443\\r\\n\\r\\n')\n"
                    "print('proxy', s.recv(100).split(b'\\r\\n')[0].decode())\n"
                    "print('env', os.environ.get('HTTPS_PROXY'))\n"
                    "for addr in [('127.0.0.1', " + std::to_string(port) + "), ('127.0.0.2', 3128), ('::1', " +
                    std::to_string(port) + ")]:\n"
                    "    try:\n        t = socket.socket(socket.AF_INET6 if ':' in addr[0] else socket.AF_INET)\n"
                    "        t.settimeout(2)\n        t.connect(addr)\n        print('CONNECTED', addr)\n"
                    "    except OSError as e:\n        print('refused', addr, e.errno)\n"
                    "try:\n    socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n    print('UDP')\n"
                    "except OSError as e:\n    print('no udp', e.errno)\n");
  pollfd p{tcp, POLLIN, 0};
  int pending = ::poll(&p, 1, 200);
  ::close(tcp);
  INFO(r.out.data << r.err.data);
  CHECK(r.out.data.find("proxy HTTP/1.1 403") != std::string::npos);  // the proxy's answer: denied host
  CHECK(r.out.data.find("env http://127.0.0.1:3128") != std::string::npos);
  CHECK(r.out.data.find("refused ('127.0.0.1', " + std::to_string(port) + ")") != std::string::npos);
  CHECK(r.out.data.find("refused ('127.0.0.2', 3128)") != std::string::npos);
  CHECK(r.out.data.find("no udp") != std::string::npos);
  CHECK(r.out.data.find("CONNECTED") == std::string::npos);
  CHECK(pending == 0);
}

TEST_CASE("contained: host processes cannot be signalled, traced or read", "[contained][escape]") {
  REQUIRE_CONTAINED();
  contained_fixture f;
  // A process of the program's own uid when the runtime is not root, nobody's otherwise:
  // the uid would allow it, only the boundary refuses.
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgid(65534) < 0 || ::setuid(65534) < 0)) _exit(1);
    ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  REQUIRE(pid > 0);
  auto r = f.python("import os, ctypes\np = " + std::to_string(pid) + "\n"
                    "try:\n    os.kill(p, 9)\n    print('KILLED')\nexcept OSError as e:\n    print('nokill', e.errno)\n"
                    "try:\n    print('ENV', open('/proc/%d/environ' % p).read())\nexcept OSError as e:\n    print('noenv', e.errno)\n"
                    "libc = ctypes.CDLL(None, use_errno=True)\n"
                    "rc = libc.ptrace(16, p, 0, 0)\nprint('ptrace', rc, ctypes.get_errno())\n");
  bool alive = ::kill(pid, 0) == 0;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  INFO(r.out.data << r.err.data);
  CHECK(r.out.data.find("nokill") != std::string::npos);
  CHECK(r.out.data.find("noenv") != std::string::npos);
  CHECK(r.out.data.find("ptrace -1") != std::string::npos);
  CHECK(alive);
}

TEST_CASE("contained: TIOCSTI and the other denied calls fail", "[contained][escape][seccomp]") {
  REQUIRE_CONTAINED();
  contained_fixture f;
  auto r = f.python("import fcntl, termios, os, ctypes\n"
                    "try:\n    fcntl.ioctl(0, termios.TIOCSTI, b'x')\n    print('INJECTED')\n"
                    "except OSError as e:\n    print('tiocsti', e.errno)\n"
                    "libc = ctypes.CDLL(None, use_errno=True)\n"
                    "rc = libc.unshare(0x10000000)\nprint('UNSHARED' if rc == 0 else 'unshare %d' % ctypes.get_errno())\n");
  CHECK(r.out.data.find("tiocsti 1\n") != std::string::npos);
  CHECK(r.out.data.find("unshare 1\n") != std::string::npos);
  CHECK(r.out.data.find("INJECTED") == std::string::npos);
  CHECK(r.out.data.find("UNSHARED") == std::string::npos);
}

TEST_CASE("contained: inherited descriptors do not reach the program", "[contained][escape]") {
  REQUIRE_CONTAINED();
  contained_fixture f;
  int leaked = ::open(f.secret.c_str(), O_RDONLY);  // no close-on-exec, as a careless embedder has
  REQUIRE(leaked >= 0);
  auto r = f.python("import os\nprint(sorted(int(x) for x in os.listdir('/proc/self/fd')))\n");
  ::close(leaked);
  CHECK(r.out.data == "[0, 1, 2, 3]\n");
}

TEST_CASE("contained: background descendants die with the execution", "[contained][descendants]") {
  REQUIRE_CONTAINED();
  contained_fixture f;
  bool on_timeout = GENERATE(false, true);
  auto marker = f.out + "/late";
  auto r = f.sh("setsid sh -c 'sleep 1; echo late > " + marker + "' </dev/null >/dev/null 2>&1 &\n"
                "nohup sh -c 'sleep 1; echo late > " + marker + "' </dev/null >/dev/null 2>&1 &\n"
                "echo launched" + std::string(on_timeout ? "; sleep 30" : ""),
                on_timeout ? 500ms : 20000ms);
  CHECK(r.out.data == "launched\n");
  CHECK(r.how == (on_timeout ? verdict::timed_out : verdict::exited));
  std::this_thread::sleep_for(1500ms);
  CHECK_FALSE(exists(marker));
  CHECK(tracked_after_settling(*f.t->rt) == 0);
}

TEST_CASE("contained: a fork bomb is bounded by the process rlimit", "[contained][limits]") {
  REQUIRE_CONTAINED();
  contained_fixture f;
  exec_request req;
  req.language = "python";
  req.code = "import os, time\nn = 0\ntry:\n    for i in range(10000):\n        if os.fork() == 0:\n"
             "            time.sleep(3)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n"
             "    print('stopped', n, e.errno)\n";
  req.pids_limit = 16;
  req.timeout = 20s;
  auto r = f.run(req);
  INFO(r.out.data << r.err.data);
  CHECK(r.out.data.find("stopped") != std::string::npos);  // it tried, and the kernel said EAGAIN
  CHECK(r.out.data.find(" 11\n") != std::string::npos);
  CHECK(tracked_after_settling(*f.t->rt) == 0);
}

TEST_CASE("contained: a large allocation is refused by the data rlimit", "[contained][limits]") {
  REQUIRE_CONTAINED();
  contained_fixture f;
  exec_request req;
  req.language = "python";
  req.code = "print('allocating', flush=True)\nx = bytearray(1024**3)\nprint('ALLOCATED')\n";
  req.memory_limit_bytes = 128 * kMiB;
  auto r = f.run(req);
  CHECK(r.out.data.find("allocating") != std::string::npos);
  CHECK(r.out.data.find("ALLOCATED") == std::string::npos);
  CHECK(r.err.data.find("MemoryError") != std::string::npos);
}

TEST_CASE("contained: protected paths inside a writable root hold without a mount", "[contained][escape][masks]") {
  REQUIRE_CONTAINED();
  contained_fixture f{network_mode::none, true};
  auto r = f.sh("cat " + f.out + "/.git/config && echo readable; "
                "if echo x >> " + f.out + "/.git/config 2>/dev/null; then echo WROTE-GIT; else echo git-refused; fi; "
                "if mkdir " + f.out + "/.git/hooks 2>/dev/null; then echo WROTE-HOOKS; else echo hooks-refused; fi; "
                "if cat " + f.out + "/.env 2>/dev/null; then echo READ-ENV; else echo env-refused; fi; "
                "echo ok > " + f.out + "/sub/file && echo sub-written; "
                "if echo x > " + f.out + "/top 2>/dev/null; then echo top-written; else echo top-refused; fi");
  INFO(r.out.data << r.err.data);
  CHECK(r.out.data.find("readable") != std::string::npos);
  CHECK(r.out.data.find("git-refused") != std::string::npos);
  CHECK(r.out.data.find("hooks-refused") != std::string::npos);
  CHECK(r.out.data.find("env-refused") != std::string::npos);
  CHECK(r.out.data.find("hunter2") == std::string::npos);
  CHECK(r.out.data.find("sub-written") != std::string::npos);
  // The price of holding the masks by rules: no new entries above them (said in the plan).
  CHECK(r.out.data.find("top-refused") != std::string::npos);
  CHECK(r.isolation.find("above protected paths") != std::string::npos);
  CHECK(read_text(f.out + "/.git/config") == "[core]\n");
  CHECK_FALSE(exists(f.out + "/.git/hooks"));
}

TEST_CASE("contained: a root moved to another path is refused, not shown elsewhere", "[contained][policy]") {
  REQUIRE_CONTAINED();
  temp_dir d{"corral-contained-moved-"};
  profile p;
  p.tier = "contained";
  p.source_roots.push_back({d.path(), "/src", false});
  test_runtime t(p, false);
  auto r = t.run(shell("true"));
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("host path") != std::string::npos);
}

TEST_CASE("contained tier detection follows the kernel features", "[contained][features]") {
  kernel_features f = detect_kernel_features();
  contained_tier here(profile{}, f);
  // Available exactly when Landlock and seccomp are (and a root runtime can change uid).
  if (f.landlock_abi > 0 && f.seccomp && ::geteuid() != 0) CHECK(here.available().available);
  kernel_features none = f;
  none.landlock_abi = 0;
  none.landlock_error = "not in the lsm list";
  auto st = contained_tier(profile{}, none).available();
  CHECK_FALSE(st.available);
  CHECK(st.reason.find("Landlock") != std::string::npos);
  kernel_features no_seccomp = f;
  no_seccomp.landlock_abi = 7;
  no_seccomp.seccomp = false;
  CHECK_FALSE(contained_tier(profile{}, no_seccomp).available().available);
  // No user namespaces does not matter to this tier: that is where it is for.
  kernel_features no_userns = f;
  no_userns.landlock_abi = 7;
  no_userns.seccomp = true;
  no_userns.user_namespaces = false;
  no_userns.cgroup_version = 0;
  if (::geteuid() != 0 || here.available().available) CHECK(contained_tier(profile{}, no_userns).available().available);
  // The older the ABI, the more it says it leaves open.
  kernel_features abi2 = f, abi7 = f;
  abi2.landlock_abi = 2;
  abi7.landlock_abi = 7;
  auto old = contained_tier::not_enforced(abi2, network_mode::none);
  CHECK(listed(old, "signals"));
  CHECK(listed(old, "truncate"));
  CHECK_FALSE(listed(contained_tier::not_enforced(abi7, network_mode::none), "signals"));
}

TEST_CASE("the enclosing cgroup's limits are read from v2 and v1 layouts", "[contained][cgroup]") {
  temp_dir d{"corral-enclosing-"};
  auto put = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(d / rel).parent_path());
    std::ofstream(d / rel) << text;
  };
  SECTION("v2: the tightest of the cgroup and its ancestors") {
    put("self_cgroup", "0::/kubepods/pod1/ctr\n");
    put("fs/kubepods/memory.max", "1073741824\n");
    put("fs/kubepods/pod1/ctr/memory.max", "max\n");
    put("fs/kubepods/pod1/ctr/pids.max", "100\n");
    put("fs/kubepods/pod1/cpu.max", "150000 100000\n");
    auto l = read_enclosing_limits(d / "fs", d / "self_cgroup");
    CHECK(l.cgroup == "/kubepods/pod1/ctr");
    CHECK(l.memory == 1073741824ull);
    CHECK(l.pids == 100ull);
    REQUIRE(l.cpus);
    CHECK(*l.cpus == Approx(1.5));
    CHECK(l.describe() == "memory 1024 MiB, pids 100, cpu 1.5");
  }
  SECTION("v1: per controller, the unlimited value ignored") {
    put("self_cgroup", "5:memory:/docker/abc\n4:pids:/docker/abc\n3:cpu,cpuacct:/docker/abc\n");
    put("fs/memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n");
    put("fs/pids/docker/abc/pids.max", "64\n");
    put("fs/cpu/docker/abc/cpu.cfs_quota_us", "-1\n");
    put("fs/cpu/docker/abc/cpu.cfs_period_us", "100000\n");
    auto l = read_enclosing_limits(d / "fs", d / "self_cgroup");
    CHECK_FALSE(l.memory);
    CHECK(l.pids == 64ull);
    CHECK_FALSE(l.cpus);
  }
  SECTION("none") {
    put("self_cgroup", "0::/\n");
    auto l = read_enclosing_limits(d / "fs", d / "self_cgroup");
    CHECK_FALSE(l.any());
    CHECK(l.describe() == "none");
  }
}

TEST_CASE("rules around a protected path grant its siblings and list its parents", "[contained][masks]") {
  temp_dir d{"corral-split-"};
  std::string root = d.path();
  for (auto* sub : {"/a", "/a/deep", "/b", "/.git"}) ::mkdir((root + sub).c_str(), 0755);
  write_text(root + "/a/deep/.env", "x");
  write_text(root + "/a/file", "x");
  ::symlink("/etc", (root + "/a/link").c_str());
  std::vector<path_mask> masks = {{root + "/.git", root + "/.git", mask_kind::read_only, "git"},
                                  {root + "/a/deep/.env", root + "/a/deep/.env", mask_kind::hidden, "env"}};
  std::vector<std::string> split;
  auto rules = split_root_rules(root, true, masks, split);
  auto rule_for = [&](const std::string& path) -> const landlock_rule* {
    for (auto& r : rules)
      if (r.path == path) return &r;
    return nullptr;
  };
  REQUIRE(rule_for(root));
  CHECK(rule_for(root)->list_only);
  CHECK(rule_for(root + "/b")->writable);
  CHECK_FALSE(rule_for(root + "/.git")->writable);
  CHECK(rule_for(root + "/a")->list_only);
  CHECK(rule_for(root + "/a/deep")->list_only);
  CHECK(rule_for(root + "/a/file")->writable);
  CHECK(rule_for(root + "/a/deep/.env") == nullptr);  // hidden: no rule at all
  CHECK(rule_for(root + "/a/link") == nullptr);       // a link is judged where it leads
  CHECK(split.size() == 3);
  // Without masks inside, one rule for the whole root.
  split.clear();
  auto whole = split_root_rules(root + "/b", true, masks, split);
  CHECK(whole.size() == 1);
  CHECK(split.empty());
}
