// The cgroup lease: detection, the cgroup tree, lease records and the actor, asserted from
// outside (kill(pid, 0), the cgroup dirs, the record files). Needs root and usable cgroups;
// otherwise each case says why it skips.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/atoms.hpp"
#include "actors/leases/cgroup_lease.hpp"
#include "actors/io/io_events.hpp"
#include "actors/leases/lease_messages.hpp"
#include "runtime_fixture.hpp"
#include "tiers/cgroups/cgroup_detect.hpp"
#include "tiers/cgroups/cgroup_set.hpp"
#include "tiers/state_dir/lease_record.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

// A zombie has died; only its parent's wait is missing.
bool alive(pid_t pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  auto close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() || text[close + 2] != 'Z';
}

kernel_features cgroup_features() {
  kernel_features f;
  detect_cgroups(f);
  return f;
}

// Empty when the cgroup cases can run; otherwise why not.
std::string skip_reason() {
  if (::geteuid() != 0) return "not root (the cgroup lease needs root or a delegated v2 subtree)";
  auto f = cgroup_features();
  if (f.cgroup_version == 0) return "no usable cgroups: " + f.cgroup_error;
  auto layout = find_cgroup_layout(f);
  if (!layout) return layout.error().describe();
  return {};
}

#define CGROUP_CASE_OR_SKIP()                                   \
  do {                                                          \
    auto why = skip_reason();                                   \
    if (!why.empty()) {                                         \
      WARN("skipped: " << why);                                 \
      return;                                                   \
    }                                                           \
  } while (0)

// The subdirectories of `dir` (its child cgroups), none when it is absent.
std::vector<std::string> subdirs_of(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_directory(ec)) out.push_back(e.path().string());
  return out;
}

std::string fresh_id() {
  static int n = 0;
  return "test-" + std::to_string(::getpid()) + "-" + std::to_string(++n);
}

// Forks a child that moves itself into every join file of `procs` (as the exec helper does)
// and then runs `script` with /bin/sh. Returns once the child has joined them all (its
// exec closes the pipe): under cgroup v1 a member seen in one hierarchy may not be in the
// next yet, and a sweep in that gap would remove a dir it was about to join. Only
// async-signal-safe calls after the fork.
pid_t spawn_in(const std::vector<std::string>& procs, const std::string& script) {
  std::vector<const char*> files;
  for (const auto& p : procs) files.push_back(p.c_str());
  int joined[2];
  if (::pipe2(joined, O_CLOEXEC) != 0) return -1;
  pid_t pid = ::fork();
  if (pid != 0) {
    ::close(joined[1]);
    char byte;
    // EOF at the child's exec or exit, which follow its joins at once.
    while (pid > 0 && ::read(joined[0], &byte, 1) < 0 && errno == EINTR) {}
    ::close(joined[0]);
    return pid;
  }
  ::close(joined[0]);
  // Catch2's handlers were inherited; a signal before exec must act as it would on sh.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // As the exec helper does: "0" moves the writer itself (it is single-threaded after fork).
  for (const char* f : files) {
    int fd = ::open(f, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0", 1) != 1) ::_exit(126);
    ::close(fd);
  }
  ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
  ::_exit(127);
}

// The wait status, or nothing when `pid` did not exit within `bound`.
std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds bound) {
  auto until = clock_type::now() + bound;
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 || clock_type::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(2ms);
  }
}

// Whatever a failed assertion leaves behind is killed and reaped.
struct child_guard {
  pid_t pid = -1;
  ~child_guard() {
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  std::optional<int> wait(std::chrono::milliseconds bound) {
    auto s = wait_exit(pid, bound);
    if (s) pid = -1;
    return s;
  }
};

// For cases that use cgroup_set directly: kill, remove, drop the record.
struct set_guard {
  cgroup_set* set;
  std::string leases_dir, id;
  ~set_guard() {
    auto until = clock_type::now() + 3s;
    while (!set->empty() && clock_type::now() < until) {
      set->kill_all();
      std::this_thread::sleep_for(2ms);
    }
    set->remove();
    if (!leases_dir.empty()) remove_lease_record(leases_dir, id);
  }
};

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds bound) {
  auto until = clock_type::now() + bound;
  while (!cond()) {
    if (clock_type::now() >= until) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

std::vector<std::string> dirs_of(const lease_grant& g) {
  std::vector<std::string> out;
  for (const auto& f : g.cgroup_procs) out.push_back(f.substr(0, f.rfind('/')));  // join files' dirs
  return out;
}

bool none_exist(const std::vector<std::string>& paths) {
  return std::none_of(paths.begin(), paths.end(), [](const std::string& p) { return exists(p); });
}

bool have_python() { return ::access("/usr/bin/python3", X_OK) == 0; }

// An actor system and a lease driven from a scoped actor, as an execution would.
struct lease_driver {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> self;
  caf::actor lease;

  lease_driver() {
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    self = std::make_unique<caf::scoped_actor>(*sys);
  }
  ~lease_driver() {
    lease = caf::actor{};
    self.reset();
    sys.reset();
  }

  void spawn(const std::string& id, const std::string& leases_dir, limits lim,
             std::chrono::milliseconds grace = 200ms) {
    cgroup_lease_config c;
    c.exec_id = id;
    c.leases_dir = leases_dir;
    c.lim = lim;
    c.kill_grace = grace;
    c.features = cgroup_features();
    lease = spawn_cgroup_lease(*sys, std::move(c));
  }

  lease_acquired acquire() {
    lease_acquired out;
    (*self)->request(lease, 10s, acquire_atom::value)
        .receive([&](lease_acquired& a) { out = std::move(a); },
                 [&](caf::error& e) { FAIL("acquire: " << sys->render(e)); });
    return out;
  }

  lease_report finish() {
    lease_report out;
    (*self)->request(lease, 15s, finish_atom::value)
        .receive([&](lease_report& r) { out = r; }, [&](caf::error& e) { FAIL("finish: " << sys->render(e)); });
    return out;
  }

  void terminate() { (*self)->send(lease, terminate_atom::value); }
  void attach(pid_t pid) { (*self)->send(lease, attach_atom::value, process_id{1}, static_cast<long>(pid)); }
};

} // namespace

TEST_CASE("cgroup detection and the layout read from mountinfo", "[cgroup]") {
  SECTION("mountinfo parsing: combined hierarchies, cgroup2, escapes") {
    std::string text =
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
        "35 31 0:32 / /sys/fs/cgroup/mem\\040ory rw,relatime - cgroup cgroup rw,memory\n"
        "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";
    auto mounts = parse_cgroup_mounts(text);
    REQUIRE(mounts.size() == 4);
    CHECK(mounts[0].point == "/sys/fs/cgroup/cpu,cpuacct");
    CHECK(mounts[0].controllers == std::vector<std::string>{"cpu", "cpuacct"});
    CHECK(mounts[1].point == "/sys/fs/cgroup/mem ory");
    CHECK(mounts[2].controllers.empty());
    CHECK(mounts[3].v2);
  }

  SECTION("lease dirs must be corral/<id> below a cgroup mount") {
    std::vector<cgroup_mount> m{{"/sys/fs/cgroup/memory", false, {"memory"}}, {"/sys/fs/cgroup/unified", true, {}}};
    CHECK(is_lease_cgroup_dir(m, "/sys/fs/cgroup/memory/corral/x1", "x1"));
    CHECK(is_lease_cgroup_dir(m, "/sys/fs/cgroup/unified/user.slice/corral/x1", "x1"));
    CHECK_FALSE(is_lease_cgroup_dir(m, "/sys/fs/cgroup/memory/corral/x2", "x1"));
    CHECK_FALSE(is_lease_cgroup_dir(m, "/sys/fs/cgroup/memory/../../../tmp/corral/x1", "x1"));
    CHECK_FALSE(is_lease_cgroup_dir(m, "/tmp/corral/x1", "x1"));
    CHECK_FALSE(is_lease_cgroup_dir(m, "/sys/fs/cgroup/memoryX/corral/x1", "x1"));
    CHECK_FALSE(is_lease_cgroup_dir(m, "/sys/fs/cgroup/memory/corral/x1/", "x1"));
    CHECK_FALSE(is_lease_cgroup_dir(m, "/sys/fs/cgroup/memory//corral/x1", "x1"));
    CHECK_FALSE(is_lease_cgroup_dir(m, "sys/fs/cgroup/memory/corral/x1", "x1"));
    CHECK_FALSE(valid_exec_id(".."));
    CHECK_FALSE(valid_exec_id("a/b"));
    CHECK(valid_exec_id("exec-12_a.b"));
  }

  SECTION("no cgroups: a tier_unavailable failure that says what to do") {
    kernel_features none;
    none.cgroup_error = "nothing mounted";
    auto l = find_cgroup_layout(none);
    REQUIRE_FALSE(l);
    CHECK(l.error().kind == failure_kind::tier_unavailable);
    CHECK(l.error().message.find("nothing mounted") != std::string::npos);
    CHECK(l.error().message.find("Delegate=yes") != std::string::npos);
  }

  SECTION("this machine") {
    auto f = cgroup_features();
    auto why = skip_reason();
    if (!why.empty()) {
      WARN("no usable cgroups here: " << why);
      return;
    }
    CHECK((f.cgroup_version == 1 || f.cgroup_version == 2));
    CHECK_FALSE(f.cgroup_controllers.empty());
    auto l = find_cgroup_layout(f);
    REQUIRE(l);
    if (l->version == 1) {
      for (const auto& h : l->v1) CHECK(exists(h.mount + "/cgroup.procs"));
    } else {
      CHECK(exists(l->v2_root + "/cgroup.procs"));
    }
    std::ostringstream desc;
    for (const auto& h : l->v1) {
      desc << " " << h.mount << "[";
      for (const auto& c : h.controllers) desc << c << " ";
      desc << "]";
    }
    std::cout << "[cgroup] version " << l->version << (l->version == 2 ? " root " + l->v2_root : desc.str())
              << "\n";
  }
}

TEST_CASE("an empty lease: acquire records and creates, finish removes both", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  temp_dir leases{"corral-leases-"};
  std::vector<double> acquire_us, finish_us;
  auto us_since = [](clock_type::time_point t) {
    return std::chrono::duration<double, std::micro>(clock_type::now() - t).count();
  };
  for (int i = 0; i < 20; ++i) {
    lease_driver d;
    auto id = fresh_id();
    auto t0 = clock_type::now();
    limits unlimited;  // no memory or pids limit: nothing to enforce
    unlimited.memory_bytes.reset();
    unlimited.pids.reset();
    d.spawn(id, leases.path(), unlimited);
    auto a = d.acquire();
    acquire_us.push_back(us_since(t0));
    REQUIRE(a.ok);
    REQUIRE_FALSE(a.grant.cgroup_procs.empty());
    for (const auto& f : a.grant.cgroup_procs) CHECK(exists(f));
    CHECK(exists(lease_record_path(leases.path(), id)));
    auto t1 = clock_type::now();
    auto r = d.finish();
    finish_us.push_back(us_since(t1));
    CHECK_FALSE(r.enforced_memory);
    CHECK_FALSE(r.out_of_memory);
    CHECK(none_exist(dirs_of(a.grant)));
    CHECK_FALSE(exists(lease_record_path(leases.path(), id)));
  }
  std::sort(acquire_us.begin(), acquire_us.end());
  std::sort(finish_us.begin(), finish_us.end());
  std::cout << "[cgroup] empty lease, median of 20: spawn+acquire " << acquire_us[10] << " us, finish "
            << finish_us[10] << " us\n";
}

TEST_CASE("acquire fails closed and leaves nothing on disk", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  temp_dir leases{"corral-leases-"};

  SECTION("no cgroups") {
    lease_driver d;
    cgroup_lease_config c;
    c.exec_id = fresh_id();
    c.leases_dir = leases.path();
    d.lease = spawn_cgroup_lease(*d.sys, c);  // features say: none
    auto a = d.acquire();
    CHECK_FALSE(a.ok);
    CHECK(a.error.kind == failure_kind::tier_unavailable);
    CHECK(a.error.message.find("cgroup lease") != std::string::npos);
    d.finish();
  }
  SECTION("a limit the kernel refuses, after the dirs were made") {
    lease_driver d;
    auto id = fresh_id();
    limits lim;
    lim.pids = 100'000'000;  // above PID_MAX_LIMIT: pids.max says EINVAL
    d.spawn(id, leases.path(), lim);
    auto a = d.acquire();
    CHECK_FALSE(a.ok);
    CHECK(a.error.message.find("pids.max") != std::string::npos);
    auto layout = find_cgroup_layout(cgroup_features());
    REQUIRE(layout);
    auto planned = cgroup_set::plan(*layout, id);
    REQUIRE(planned);
    CHECK(none_exist(planned->dirs()));
    d.finish();
  }
  std::error_code ec;
  CHECK(std::filesystem::is_empty(leases.path(), ec));
}

TEST_CASE("a memory limit: the OOM killer fires and is reported as such", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  if (!have_python()) {
    WARN("skipped: no /usr/bin/python3 to allocate with");
    return;
  }
  temp_dir leases{"corral-leases-"};
  lease_driver d;
  limits lim;
  lim.memory_bytes = 64 * kMiB;
  d.spawn(fresh_id(), leases.path(), lim);
  auto a = d.acquire();
  REQUIRE(a.ok);
  child_guard child{spawn_in(a.grant.cgroup_procs, "exec python3 -c 'b = bytearray(256 * 1024 * 1024)'")};
  d.attach(child.pid);
  auto status = child.wait(20s);
  REQUIRE(status);
  CHECK(WIFSIGNALED(*status));
  if (WIFSIGNALED(*status)) CHECK(WTERMSIG(*status) == SIGKILL);
  auto r = d.finish();
  CHECK(r.enforced_memory);
  CHECK(r.out_of_memory);
  CHECK_FALSE(r.pids_limit_hit);
  CHECK(r.usage.peak_memory_bytes >= 50 * kMiB);
  CHECK(r.usage.peak_memory_bytes <= 65 * kMiB);
  CHECK(none_exist(dirs_of(a.grant)));
}

TEST_CASE("a program under its memory limit is not reported as OOM", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  temp_dir leases{"corral-leases-"};
  lease_driver d;
  limits lim;
  lim.memory_bytes = 64 * kMiB;
  d.spawn(fresh_id(), leases.path(), lim);
  auto a = d.acquire();
  REQUIRE(a.ok);
  child_guard child{spawn_in(a.grant.cgroup_procs, "head -c 8000000 /dev/zero | cat > /dev/null")};
  auto status = child.wait(10s);
  REQUIRE(status);
  CHECK(WIFEXITED(*status));
  auto r = d.finish();
  CHECK(r.enforced_memory);
  CHECK_FALSE(r.out_of_memory);
}

TEST_CASE("a fork bomb is bounded by the pids limit and nothing of it survives finish", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  temp_dir leases{"corral-leases-"};
  temp_dir work{"corral-bomb-"};
  lease_driver d;
  limits lim;
  lim.pids = 16;
  d.spawn(fresh_id(), leases.path(), lim);
  auto a = d.acquire();
  REQUIRE(a.ok);
  std::string log = work / "pids";
  // Branches that spawn sleepers forever; every pid that was started is logged.
  std::string bomb = "exec 2>/dev/null; F=" + log +
                     "; echo $$ >> $F; for b in 1 2 3; do (while :; do sleep 60 & echo $! >> $F; done) & "
                     "echo $! >> $F; done; while :; do sleep 60 & echo $! >> $F; done";
  child_guard child{spawn_in(a.grant.cgroup_procs, bomb)};
  d.attach(child.pid);

  auto layout = find_cgroup_layout(cgroup_features());
  REQUIRE(layout);
  auto view = cgroup_set::adopt(dirs_of(a.grant));
  // Bounded: the count reaches the limit and stays there.
  CHECK(wait_until([&] { return view.read_counters().pids_limit_hit; }, 5s));
  std::this_thread::sleep_for(200ms);
  CHECK(view.pids().size() <= 16);

  auto t0 = clock_type::now();
  auto r = d.finish();
  auto cleanup_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  std::cout << "[cgroup] fork bomb (pids.max 16) finish: " << cleanup_ms << " ms\n";
  CHECK(r.enforced_pids);
  CHECK(r.pids_limit_hit);
  CHECK_FALSE(r.out_of_memory);
  CHECK(none_exist(dirs_of(a.grant)));

  // The main shell may have exited on its own ("can't fork" is fatal to sh) or been killed.
  auto status = child.wait(5s);
  REQUIRE(status);
  std::ifstream in(log);
  std::set<pid_t> started;
  for (long p; in >> p;) started.insert(static_cast<pid_t>(p));
  CHECK(started.size() >= 10);
  // The sleepers were reparented to init; give it a moment to reap what is dead.
  auto survivors = [&] {
    return std::count_if(started.begin(), started.end(), [](pid_t p) { return alive(p); });
  };
  CHECK(wait_until([&] { return survivors() == 0; }, 2s));
  CHECK(survivors() == 0);
}

TEST_CASE("terminate: a child that ignores SIGTERM is killed after the grace", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  temp_dir leases{"corral-leases-"};
  temp_dir work{"corral-term-"};
  lease_driver d;
  d.spawn(fresh_id(), leases.path(), limits{}, 300ms);
  auto a = d.acquire();
  REQUIRE(a.ok);
  std::string ready = work / "ready";
  child_guard child{spawn_in(a.grant.cgroup_procs,
                             "trap '' TERM; echo up > " + ready + "; while :; do sleep 0.05; done")};
  d.attach(child.pid);
  REQUIRE(wait_until([&] { return exists(ready); }, 5s));

  auto t0 = clock_type::now();
  d.terminate();
  auto status = child.wait(5s);
  auto elapsed = clock_type::now() - t0;
  REQUIRE(status);
  CHECK(WIFSIGNALED(*status));
  if (WIFSIGNALED(*status)) CHECK(WTERMSIG(*status) == SIGKILL);
  CHECK(elapsed >= 250ms);  // SIGTERM alone did not end it
  CHECK(elapsed < 3s);
  auto r = d.finish();
  CHECK(none_exist(dirs_of(a.grant)));
  (void)r;
}

TEST_CASE("terminate: a child that honours SIGTERM ends before the grace", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  temp_dir leases{"corral-leases-"};
  lease_driver d;
  d.spawn(fresh_id(), leases.path(), limits{}, 2000ms);
  auto a = d.acquire();
  REQUIRE(a.ok);
  child_guard child{spawn_in(a.grant.cgroup_procs, "exec sleep 60")};
  REQUIRE(wait_until([&] { return !cgroup_set::adopt(dirs_of(a.grant)).empty(); }, 5s));
  d.terminate();
  auto status = child.wait(1500ms);
  REQUIRE(status);
  CHECK(WIFSIGNALED(*status));
  if (WIFSIGNALED(*status)) CHECK(WTERMSIG(*status) == SIGTERM);
  d.finish();
  CHECK(none_exist(dirs_of(a.grant)));
}

TEST_CASE("a cpu quota of 0.2 cores holds a busy loop well below its wall time", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  if (!have_python()) {
    WARN("skipped: no /usr/bin/python3 for the busy loop");
    return;
  }
  temp_dir leases{"corral-leases-"};
  lease_driver d;
  limits lim;
  lim.cpu_cores = 0.2;
  d.spawn(fresh_id(), leases.path(), lim);
  auto a = d.acquire();
  REQUIRE(a.ok);
  auto t0 = clock_type::now();
  child_guard child{spawn_in(a.grant.cgroup_procs,
                             "exec python3 -c 'import time\nt = time.time() + 1\nwhile time.time() < t: pass'")};
  auto status = child.wait(10s);
  auto wall = std::chrono::duration<double>(clock_type::now() - t0).count();
  REQUIRE(status);
  CHECK(WIFEXITED(*status));
  auto r = d.finish();
  double cpu = static_cast<double>(r.usage.cpu_user_us + r.usage.cpu_system_us) / 1e6;
  std::cout << "[cgroup] busy loop under 0.2 cores: cpu " << cpu << " s over " << wall << " s wall\n";
  CHECK(r.enforced_cpu);
  CHECK(cpu > 0.01);
  // Against the wall time it really took (a loaded machine stretches it), plus one period.
  CHECK(cpu < 0.2 * wall + 0.15);
  CHECK(wall >= 1.0);
}

TEST_CASE("an actor that exits without finish still kills and removes", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  temp_dir leases{"corral-leases-"};
  lease_driver d;
  auto id = fresh_id();
  d.spawn(id, leases.path(), limits{});
  auto a = d.acquire();
  REQUIRE(a.ok);
  child_guard child{spawn_in(a.grant.cgroup_procs, "exec sleep 60")};
  REQUIRE(wait_until([&] { return !cgroup_set::adopt(dirs_of(a.grant)).empty(); }, 5s));
  (*d.self)->send_exit(d.lease, caf::exit_reason::user_shutdown);
  auto status = child.wait(5s);
  REQUIRE(status);
  CHECK(WIFSIGNALED(*status));
  CHECK(wait_until([&] { return none_exist(dirs_of(a.grant)); }, 5s));
  CHECK(wait_until([&] { return !exists(lease_record_path(leases.path(), id)); }, 5s));
}

// A crashed run's record: its owner line names a process that is gone.
static void make_owner_dead(const std::string& record) {
  pid_t gone = ::fork();
  if (gone == 0) _exit(0);
  ::waitpid(gone, nullptr, 0);
  std::ifstream in(record);
  std::string text((std::istreambuf_iterator<char>(in)), {}), out, line;
  std::istringstream lines(text);
  while (std::getline(lines, line))
    out += (line.rfind("owner ", 0) == 0 ? "owner " + std::to_string(gone) + " 1" : line) + "\n";
  std::ofstream(record, std::ios::trunc) << out;
}

TEST_CASE("the shared corral parent goes with its last execution's cgroups and comes back with the next", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  auto layout = find_cgroup_layout(cgroup_features());
  REQUIRE(layout);
  auto first = cgroup_set::plan(*layout, fresh_id());
  auto second = cgroup_set::plan(*layout, fresh_id());
  REQUIRE(first);
  REQUIRE(second);
  std::vector<std::string> parents;
  for (const auto& d : first->dirs()) parents.push_back(d.substr(0, d.rfind('/')));
  // Another runtime on this machine may hold cgroups there: then the parent must stay.
  bool others = false;
  for (const auto& p : parents) others = others || !subdirs_of(p).empty();
  REQUIRE(first->create(limits{}));
  REQUIRE(second->create(limits{}));
  REQUIRE(first->remove());
  for (const auto& p : parents) CHECK(std::filesystem::is_directory(p));  // the second still uses it
  REQUIRE(second->remove());
  if (others) {
    WARN("other cgroups sit beside ours in a corral parent; its removal is not checked");
  } else {
    for (const auto& p : parents) CHECK_FALSE(std::filesystem::exists(p));
  }
  auto third = cgroup_set::plan(*layout, fresh_id());
  REQUIRE(third);
  REQUIRE(third->create(limits{}));  // makes the parents again
  for (const auto& d : third->dirs()) CHECK(std::filesystem::is_directory(d));
  REQUIRE(third->remove());
}

TEST_CASE("sweep_leases leaves the leases of a runtime that is still running", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  temp_dir leases{"corral-leases-"};
  auto layout = find_cgroup_layout(cgroup_features());
  REQUIRE(layout);
  auto id = fresh_id();
  auto set = cgroup_set::plan(*layout, id);
  REQUIRE(set);
  set_guard guard{&*set, leases.path(), id};
  REQUIRE(write_lease_record(leases.path(), id, set->dirs()));  // owned by this live process
  REQUIRE(set->create(limits{}));
  child_guard child{spawn_in(set->procs_files(), "exec sleep 60")};
  REQUIRE(wait_until([&] { return !set->empty(); }, 5s));
  auto sum = sweep_leases(leases.path());
  CHECK(sum.records == 1);
  CHECK(sum.live == 1);
  CHECK(sum.swept == 0);
  CHECK_FALSE(set->empty());  // the sleep is alive
  CHECK(exists(lease_record_path(leases.path(), id)));
}

TEST_CASE("sweep_leases kills and removes what a crashed run left", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  temp_dir leases{"corral-leases-"};
  auto layout = find_cgroup_layout(cgroup_features());
  REQUIRE(layout);
  auto id = fresh_id();
  auto set = cgroup_set::plan(*layout, id);
  REQUIRE(set);
  set_guard guard{&*set, leases.path(), id};
  REQUIRE(write_lease_record(leases.path(), id, set->dirs()));
  make_owner_dead(lease_record_path(leases.path(), id));
  REQUIRE(set->create(limits{}));
  child_guard child{spawn_in(set->procs_files(), "exec sleep 60")};
  REQUIRE(wait_until([&] { return !set->empty(); }, 5s));
  // A temp file of an interrupted write goes too, once it is old enough not to be a live
  // peer's record being written now; a young one stays.
  { std::ofstream(leases / "other.lease.tmp") << "corral-lease 1\n"; }
  {
    timespec old_times[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
    REQUIRE(::utimensat(AT_FDCWD, (leases / "other.lease.tmp").c_str(), old_times, 0) == 0);
  }
  { std::ofstream(leases / "young.1.lease.tmp") << "corral-lease 1\n"; }
  // An empty record is what a machine crash can leave of a write: it names nothing.
  { std::ofstream(leases / "torn.lease"); }

  auto sum = sweep_leases(leases.path());
  CHECK(sum.records == 2);
  CHECK(sum.swept == 2);
  CHECK(sum.refused == 0);
  CHECK(sum.errors.empty());
  auto status = child.wait(5s);
  REQUIRE(status);
  CHECK(WIFSIGNALED(*status));
  CHECK(none_exist(set->dirs()));
  CHECK_FALSE(exists(lease_record_path(leases.path(), id)));
  CHECK_FALSE(exists(leases / "other.lease.tmp"));
  CHECK(exists(leases / "young.1.lease.tmp"));
  CHECK_FALSE(exists(leases / "torn.lease"));
}

TEST_CASE("a runtime's start removes old, empty cgroups no record names, and nothing else", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  auto layout = find_cgroup_layout(cgroup_features());
  REQUIRE(layout);
  // What a SIGKILLed runtime leaves when its state dir (and so its records) is gone too.
  auto make = [&](const std::string& id) {
    auto set = cgroup_set::plan(*layout, id);
    REQUIRE(set);
    REQUIRE(set->create({}));
    return std::move(*set);
  };
  auto age = [](const cgroup_set& set) {
    for (const auto& d : set.dirs()) {
      timespec old[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
      REQUIRE(::utimensat(AT_FDCWD, d.c_str(), old, 0) == 0);
    }
  };
  auto orphan = make(fresh_id()), young = make(fresh_id()), busy = make(fresh_id());
  set_guard g1{&orphan, "", ""}, g2{&young, "", ""}, g3{&busy, "", ""};
  age(orphan);
  age(busy);
  child_guard member{spawn_in(busy.join_files(), "exec sleep 60")};
  REQUIRE(wait_until([&] { return !busy.empty(); }, 5s));

  test_runtime t;  // starting it is the sweep

  CHECK(none_exist(orphan.dirs()));
  for (const auto& d : young.dirs()) CHECK(exists(d));  // could be a lease being set up
  for (const auto& d : busy.dirs()) CHECK(exists(d));   // has a process: never removed
  CHECK(alive(member.pid));
}

TEST_CASE("a tampered lease record pointing outside cgroupfs is refused and nothing is touched", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  temp_dir leases{"corral-leases-"};
  temp_dir decoy{"corral-decoy-"};
  // A directory that looks like a cgroup, listing a live process as its member.
  auto id = fresh_id();
  std::string fake = decoy.path() + "/corral/" + id;
  std::filesystem::create_directories(fake);
  child_guard victim{spawn_in({}, "exec sleep 60")};
  { std::ofstream(fake + "/cgroup.procs") << victim.pid << "\n"; }

  auto layout = find_cgroup_layout(cgroup_features());
  REQUIRE(layout);
  std::string first_mount = layout->version == 2 ? layout->v2_root : layout->v1.front().mount;
  for (const std::string& line : {fake, first_mount + "/../../.." + fake, first_mount + "/corral/not-" + id}) {
    INFO("record names " << line);
    { std::ofstream(lease_record_path(leases.path(), id)) << "corral-lease 1\n" << line << "\n"; }
    auto sum = sweep_leases(leases.path());
    CHECK(sum.records == 1);
    CHECK(sum.refused == 1);
    CHECK(sum.swept == 0);
    CHECK(sum.killed == 0);
    REQUIRE(sum.errors.size() == 1);
    CHECK(sum.errors[0].find("left alone") != std::string::npos);
    CHECK(alive(victim.pid));
    CHECK(exists(fake + "/cgroup.procs"));
    CHECK(exists(lease_record_path(leases.path(), id)));
  }
  // A record without the header is refused too.
  { std::ofstream(lease_record_path(leases.path(), id)) << fake << "\n"; }
  auto sum = sweep_leases(leases.path());
  CHECK(sum.refused == 1);
  CHECK(alive(victim.pid));
}

TEST_CASE("without root or delegation, creating says which path and what to do", "[cgroup]") {
  CGROUP_CASE_OR_SKIP();
  auto layout = find_cgroup_layout(cgroup_features());
  REQUIRE(layout);
  auto set = cgroup_set::plan(*layout, fresh_id());
  REQUIRE(set);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  // A child that drops to nobody tries what the lease would; root's view stays untouched.
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
        ::setresuid(65534, 65534, 65534) != 0)
      ::_exit(3);
    auto s = set->create(limits{});
    std::string msg = s ? std::string("created") : s.error().describe();
    if (s) set->remove();
    ssize_t n = ::write(fds[1], msg.data(), msg.size());
    ::_exit(n < 0 ? 4 : 0);
  }
  ::close(fds[1]);
  child_guard child{pid};
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  auto status = child.wait(5s);
  REQUIRE(status);
  REQUIRE(WIFEXITED(*status));
  REQUIRE(WEXITSTATUS(*status) == 0);
  INFO(msg);
  CHECK(msg.rfind("tier unavailable", 0) == 0);
  CHECK(msg.find(set->dirs().front().substr(0, set->dirs().front().rfind('/'))) != std::string::npos);
  CHECK(msg.find("run as root") != std::string::npos);
  CHECK(msg.find("Delegate=yes") != std::string::npos);
  CHECK(none_exist(set->dirs()));
}
