// A user who is not root runs the default tier on cgroup v2 when a subtree is delegated to
// it, as systemd's Delegate=yes does. The test plays systemd: it makes a cgroup below the v2
// root that uid 65534 owns, starts `corral run` as that user inside it, and checks from
// outside that corral moved into its leaf, held the execution to its memory limit in a
// cgroup below the delegated one, and left no execution cgroup behind.
#include <catch2/catch.hpp>

#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/as_nobody.hpp"
#include "tests/runtime_fixture.hpp"
#include "tiers/cgroups/cgroup_delegation.hpp"
#include "tiers/cgroups/cgroup_files.hpp"
#include "tiers/cgroups/cgroup_mounts.hpp"
#include "tiers/kernel_features.hpp"

using namespace corral;
using namespace corral::testing;

namespace {

constexpr uid_t kUser = 65534;

// The cgroup2 mount whose root offers memory, pids and cpu (a pure v2 machine), or "".
std::string v2_root_with_controllers() {
  for (auto& m : read_cgroup_mounts()) {
    if (!m.v2 || m.root != "/") continue;
    auto offered = cgroupfs::words(cgroupfs::read_small(m.point + "/cgroup.controllers").value_or(""));
    if (cgroupfs::contains(offered, "memory") && cgroupfs::contains(offered, "pids") &&
        cgroupfs::contains(offered, "cpu"))
      return m.point;
  }
  return "";
}

// What kUser lacks to run the landlock tier apart from cgroups (user namespaces, Landlock,
// the binaries within reach), or "": asked in a child that has become kUser.
std::string user_problem() {
  return as_nobody([] {
    if (::access(CORRAL_TEST_CLI, X_OK) != 0 || ::access(CORRAL_TEST_HELPER, X_OK) != 0)
      return "uid 65534 cannot execute " + std::string(CORRAL_TEST_CLI) + " and its helper (a directory above is closed)";
    auto f = detect_kernel_features();
    if (!f.user_namespaces) return "uid 65534 cannot make user namespaces here: " + f.user_namespace_error;
    if (f.landlock_abi == 0) return "no Landlock: " + f.landlock_error;
    return std::string();
  });
}

// Why this machine cannot run the delegation test, or "".
std::string delegation_problem() {
  if (::geteuid() != 0) return "needs root to delegate a cgroup to another uid";
  auto v2 = v2_root_with_controllers();
  if (v2.empty())
    return "no cgroup2 mount here offers memory, pids and cpu (cgroup v1 or hybrid: the controllers are on v1 "
           "hierarchies, which cannot be delegated)";
  // In a cgroup namespace the mount shows a cgroup holding this test: its children may not
  // get controllers while it does (the hierarchy's real root has no cgroup.type).
  if (cgroupfs::exists(v2 + "/cgroup.type"))
    return v2 + " is a cgroup namespace's root, not the hierarchy's: this test cannot delegate below it";
  return user_problem();
}

// Plays systemd's Delegate=yes: a cgroup below the v2 root owned by kUser, with the
// controllers enabled for it; removed (with what corral made in it) by the destructor.
struct delegated_cgroup {
  std::string v2 = v2_root_with_controllers();
  std::string dir;
  std::vector<std::string> enabled;  // controllers this test enabled at the root, to undo

  explicit delegated_cgroup(const std::string& name)
      : dir(v2 + "/corral-delegation-test-" + std::to_string(::getpid()) + "-" + name) {
    auto on = cgroupfs::words(cgroupfs::read_small(v2 + "/cgroup.subtree_control").value_or(""));
    for (const char* c : {"memory", "pids", "cpu"}) {
      if (cgroupfs::contains(on, c)) continue;
      REQUIRE(cgroupfs::write_small(v2 + "/cgroup.subtree_control", std::string("+") + c) == 0);
      enabled.push_back(c);
    }
    REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
    for (const char* f : {"", "/cgroup.procs", "/cgroup.subtree_control", "/cgroup.threads"})
      REQUIRE(::chown((dir + f).c_str(), kUser, kUser) == 0);
  }
  ~delegated_cgroup() {
    // Whatever is left in it (a corral killed at the bound leaves its jail) is killed, then
    // the tree goes deepest first.
    cgroupfs::write_small(dir + "/cgroup.kill", "1");
    eventually([&] {
      return cgroupfs::read_small(dir + "/cgroup.events").value_or("").find("populated 1") == std::string::npos;
    });
    remove_tree(dir);
    for (auto& c : enabled) cgroupfs::write_small(v2 + "/cgroup.subtree_control", "-" + c);
  }
  void remove_tree(const std::string& d) const {
    for (auto& child : children(d)) remove_tree(d + "/" + child);
    ::rmdir(d.c_str());
  }
  // The child cgroups (directories) of `sub`.
  std::vector<std::string> children(const std::string& sub) const {
    std::vector<std::string> out;
    for (auto& e : entries(sub)) {
      struct stat st {};
      if (::stat((sub + "/" + e).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) out.push_back(e);
    }
    return out;
  }
};

struct ran {
  int status = -1;
  std::string out, err;
};

// `corral run ARGS` as kUser, started inside `cg` (the parent moves the child there before
// it execs, as systemd starts a unit's process in its cgroup); bounded to 60 s.
ran run_as_user_in(const delegated_cgroup& cg, const temp_dir& home, std::vector<std::string> args) {
  int go[2], out[2];
  REQUIRE(::pipe2(go, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  std::string err_file = home / "stderr";
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(go[1]);  // else a parent that failed before writing would leave it waiting forever
    ::close(out[0]);
    char b;
    if (::read(go[0], &b, 1) != 1) ::_exit(90);
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kUser, kUser, kUser) != 0 || ::setresuid(kUser, kUser, kUser) != 0)
      ::_exit(91);
    int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (err < 0 || ::dup2(out[1], 1) < 0 || ::dup2(err, 2) < 0 || ::chdir(home.path().c_str()) != 0) ::_exit(92);
    ::setenv("HOME", home.path().c_str(), 1);
    ::setenv("XDG_RUNTIME_DIR", home.path().c_str(), 1);
    std::vector<char*> argv{const_cast<char*>("corral"), const_cast<char*>("run")};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(CORRAL_TEST_CLI, argv.data());
    ::_exit(93);
  }
  ::close(go[0]);
  ::close(out[1]);
  // systemd's part: the unit's process starts in its delegated cgroup. Refused, the child
  // is ended here (its go pipe closes) and the test stops.
  int moved = cgroupfs::write_small(cg.dir + "/cgroup.procs", std::to_string(pid));
  if (moved != 0 || ::write(go[1], "g", 1) != 1) {
    ::close(go[1]);
    ::close(out[0]);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    FAIL("could not start the child in " << cg.dir << ": " << std::strerror(moved));
  }
  ::close(go[1]);
  ran r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{out[0], POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    r.out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  if (!eventually([&] { return ::waitpid(pid, &r.status, WNOHANG) == pid; }, std::chrono::seconds(5))) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &r.status, 0);
    FAIL("corral run as uid 65534 did not end within 60 s");
  }
  r.err = read_text(err_file);
  return r;
}

} // namespace

TEST_CASE("the delegation test's skip agrees with what corral detects as root", "[cgroup][delegation]") {
  auto f = detect_kernel_features();
  auto v2 = v2_root_with_controllers();
  if (!v2.empty()) {
    // Root may write the v2 root: corral uses it, not a delegated cgroup.
    CHECK(f.cgroup_version == 2);
    CHECK(f.cgroup_root == v2);
    CHECK_FALSE(f.cgroup_delegated);
  } else {
    CHECK(f.cgroup_version != 2);
    CHECK_THAT(delegation_problem(), Catch::Contains("no cgroup2 mount here offers memory, pids and cpu") ||
                                         Catch::Contains("needs root"));
  }
}

TEST_CASE("a user with a delegated cgroup v2 subtree runs the default tier with its limits", "[cgroup][delegation]") {
  if (auto problem = delegation_problem(); !problem.empty()) {
    WARN("skipped: " + problem);
    return;
  }
  temp_dir home("corral-delegated-home-");
  REQUIRE(::chown(home.path().c_str(), kUser, kUser) == 0);

  // An ordinary run: it works, on the landlock tier, as the user. Each run gets a cgroup
  // of its own, as each systemd-run scope does: once corral has enabled controllers in one,
  // no process may be put into it.
  delegated_cgroup cg("hello");
  auto hello = run_as_user_in(cg, home, {"--json", "--", "/bin/sh", "-c", "id -u"});
  INFO(hello.err);
  REQUIRE(WIFEXITED(hello.status));
  auto j = nlohmann::json::parse(hello.out);
  CHECK(j["verdict"] == "exited");
  CHECK(j["tier"] == "landlock");
  CHECK(j["stdout"] == "65534\n");
  // corral moved itself out of the delegated cgroup into its leaf.
  CHECK(exists(cg.dir + "/" + kRuntimeLeaf));

  // The limit holds: a shell that grows past 64 MiB ends out of memory, in a cgroup below
  // the delegated one (corral/<id>, removed afterwards).
  delegated_cgroup cg2("hog");
  auto hog = run_as_user_in(cg2, home, {"--json", "--memory", "64m", "--timeout", "30s", "--", "/bin/sh", "-c",
                                        "x=$(head -c 300000000 /dev/zero | tr '\\0' a); echo ${#x}"});
  INFO(hog.err);
  auto k = nlohmann::json::parse(hog.out);
  CHECK(k["verdict"] == "out_of_memory");
  CHECK(k["tier"] == "landlock");
  CHECK(cg2.children(cg2.dir + "/corral").empty());
  // Nothing of corral's left in its leaf either: the run has ended.
  CHECK(read_text(cg2.dir + "/" + kRuntimeLeaf + "/cgroup.procs").find_first_not_of(" \n") == std::string::npos);
}
