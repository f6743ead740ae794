// Warm jails (actors/warm/warm_pool.hpp): landlock jails armed before their request. Each case
// asserts from outside: what ran inside, that the boundary held, that a request's limits
// reached the jail's cgroups, that nothing of one execution reaches the next, and that a
// jail killed or left unused leaves no process, cgroup or scratch dir behind.
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <future>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "landlock_fixture.hpp"
#include "runtime_fixture.hpp"
#include "tiers/exec_helper/spec_frames.hpp"
#include "tiers/jail/jail_spec.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> names_of(const exec_result& r) {
  std::vector<std::string> names;
  for (auto& s : r.steps) names.push_back(s.name);
  return names;
}

bool has_step(const exec_result& r, const std::string& name) {
  auto n = names_of(r);
  return std::find(n.begin(), n.end(), name) != n.end();
}

// The warm jails' lease ids (<instance>-wN) named by the records in the state dir.
std::vector<std::string> warm_lease_ids(const test_runtime& t) {
  std::vector<std::string> ids;
  const std::string suffix = ".lease";
  for (auto& name : entries(t.state.path() + "/state/leases"))
    if (name.find("-w") != std::string::npos && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      ids.push_back(name.substr(0, name.size() - suffix.size()));
  return ids;
}

std::vector<pid_t> pids_in(const std::string& id) {
  std::vector<pid_t> out;
  for (auto& dir : cgroups_of(id)) {
    std::ifstream procs(dir + "/cgroup.procs");
    pid_t pid;
    while (procs >> pid) out.push_back(pid);
  }
  return out;
}

profile landlock_profile() {
  profile p;
  p.tier = "landlock";
  p.limit.kill_grace = 200ms;
  return p;
}

} // namespace

TEST_CASE("a warm jail runs the request's program with its env and stdin, and is replaced", "[landlock][warm]") {
  REQUIRE_LANDLOCK();
  test_runtime t(landlock_profile(), false, 1);
  auto req = shell("echo \"$GIVEN\"; cat; pwd; id -u; echo written > /work/file; cat /work/file");
  req.env["GIVEN"] = "from-the-request";
  req.stdin_data = std::string("line from stdin\n");
  auto r = t.run(req);
  REQUIRE(r);
  CHECK(r->out.data == "from-the-request\nline from stdin\n/work\n65534\nwritten\n");
  CHECK(r->how == verdict::exited);
  // Warm: the helper's setup steps ran before the request, so none is in its result.
  INFO("steps taken");
  CHECK_FALSE(has_step(*r, "namespaces"));
  CHECK(names_of(*r).front() == "lease");
  // The result closes on the counters: read at once (lease_report, the cgroup goes just
  // after) or, when the helper was reaped before the program's exit was handled (a loaded
  // machine), read as the lease finishes (lease_finish).
  auto closing = names_of(*r).back();
  CHECK((closing == "lease_report" || closing == "lease_finish"));
  CHECK(r->isolation.find("landlock") == 0);

  // A new jail is armed for the next request; without stdin the program sees EOF at once.
  auto cat = t.run(program({"/bin/cat"}));
  REQUIRE(cat);
  CHECK(cat->exit_code == 0);
  CHECK(cat->out.data.empty());
  CHECK_FALSE(has_step(*cat, "namespaces"));
  // The jail armed for the next request is the pool's, not a process left behind.
  CHECK(tracked_after_settling(*t.rt) == 0);

  // The same profile without warm jails builds its jail inside the request.
  test_runtime cold(landlock_profile(), false, 0);
  auto c = cold.run(program({"/bin/true"}));
  REQUIRE(c);
  CHECK(has_step(*c, "namespaces"));
}

// A language's source file goes straight into the taken jail's own dir, its /work: the
// request makes no scratch dir of its own, and leaves none.
TEST_CASE("a warm jail runs a language's source file written into its own /work", "[landlock][warm][lang]") {
  REQUIRE_LANDLOCK();
  test_runtime t(landlock_profile(), false, 1);
  exec_request req;
  req.language = "python";
  req.code = "import os\nprint(sorted(os.listdir('/work')), os.getcwd())\nprint(open('main.py').readline().strip())\n";
  auto r = t.run(req);
  REQUIRE(r);
  INFO(r->err.data);
  CHECK(r->exit_code == 0);
  CHECK(r->out.data == "['main.py'] /work\nimport os\n");
  CHECK_FALSE(has_step(*r, "namespaces"));  // it ran warm
  // The scratch dirs left are the armed replacement's alone.
  CHECK(tracked_after_settling(*t.rt) == 0);
  for (auto& name : entries(t.state.path() + "/state/scratch")) CHECK(name.find("-w") != std::string::npos);
}

TEST_CASE("a warm jail holds the boundary, and nothing of one execution reaches the next", "[landlock][warm][escape]") {
  REQUIRE_LANDLOCK();
  temp_dir host{"corral-warm-"};
  ::chmod(host.path().c_str(), 0755);
  auto outside = host / "outside";
  ::mkdir(outside.c_str(), 0777);
  ::chmod(outside.c_str(), 0777);  // only the boundary keeps the jail out
  std::ofstream(outside + "/secret") << "hunter2-warm\n";
  ::chmod((outside + "/secret").c_str(), 0644);
  ::setenv("CORRAL_WARM_HOST_SECRET", "host-value-must-not-leak", 1);

  test_runtime t(landlock_profile(), false, 1);
  auto r = t.run(shell("echo trying; cat " + outside + "/secret; echo x > " + outside +
                       "/marker; env; echo done"));
  REQUIRE(r);
  CHECK(r->out.data.find("trying") != std::string::npos);
  CHECK(r->out.data.find("done") != std::string::npos);
  CHECK(r->out.data.find("hunter2") == std::string::npos);
  CHECK(r->out.data.find("host-value-must-not-leak") == std::string::npos);
  CHECK_FALSE(exists(outside + "/marker"));
  CHECK_FALSE(has_step(*r, "namespaces"));

  // The first execution leaves files in its /tmp and /work and a background process.
  auto first = t.run(shell("echo left > /tmp/leftover; echo left > /work/leftover; cat /tmp/leftover /work/leftover"));
  REQUIRE(first);
  CHECK(first->out.data == "left\nleft\n");
  auto second = t.run(shell("ls -A /tmp /work; cat /tmp/leftover /work/leftover 2>&1; echo end"));
  REQUIRE(second);
  CHECK(second->out.data.find("left\n") == std::string::npos);
  CHECK(second->out.data.find("No such file") != std::string::npos);
  CHECK(second->out.data.find("end") != std::string::npos);
  ::unsetenv("CORRAL_WARM_HOST_SECRET");
}

// The value of `field` in /proc/<pid>/status ("" when absent or gone).
static std::string status_field(pid_t pid, const std::string& field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field + ":", 0) == 0) {
      auto value = line.substr(field.size() + 1);
      return value.substr(value.find_first_not_of(" \t"));
    }
  return "";
}

TEST_CASE("an armed jail's init is confined before any request arrives", "[landlock][warm][escape]") {
  REQUIRE_LANDLOCK();
  test_runtime t(landlock_profile(), false, 1);
  REQUIRE(t.wait_armed());
  auto ids = warm_lease_ids(t);
  REQUIRE(ids.size() == 1);
  // The jail's init is the process of the lease that is pid 1 of its own pid namespace.
  pid_t init = 0;
  for (pid_t pid : pids_in(ids.front())) {
    auto nspid = status_field(pid, "NSpid");
    if (nspid.size() > 2 && nspid.substr(nspid.size() - 2) == "\t1") init = pid;
  }
  REQUIRE(init > 0);
  INFO("the jail's init is " << init);
  CHECK(status_field(init, "CapPrm") == "0000000000000000");
  CHECK(status_field(init, "CapEff") == "0000000000000000");
  CHECK(status_field(init, "CapBnd") == "0000000000000000");
  CHECK(status_field(init, "NoNewPrivs") == "1");
  CHECK(status_field(init, "Seccomp") == "2");
  CHECK(status_field(init, "Uid").rfind("0\t", 0) != 0);  // not the host's root
}

TEST_CASE("the program cannot reach the jail's init: its /proc files, its rlimits, a signal", "[landlock][warm][escape]") {
  REQUIRE_LANDLOCK();
  std::size_t warm = GENERATE(0u, 1u);
  INFO((warm ? "warm" : "cold") << " jail");
  test_runtime t(landlock_profile(), false, warm);
  auto r = t.run(shell("echo trying; "
                       "cat /proc/1/environ >/dev/null 2>&1 && echo environ-read || echo environ-denied; "
                       "ls /proc/1/fd >/dev/null 2>&1 && echo fds-listed || echo fds-denied; "
                       "prlimit --pid 1 --nofile=1:1 2>/dev/null && echo prlimit-set || echo prlimit-denied; "
                       "echo kill-tried; kill -TERM 1; sleep 0.3; echo still-running"));
  REQUIRE(r);
  INFO(r->out.data << r->err.data);
  CHECK(r->out.data.find("trying") != std::string::npos);
  CHECK(r->out.data.find("environ-denied") != std::string::npos);
  CHECK(r->out.data.find("fds-denied") != std::string::npos);
  CHECK(r->out.data.find("prlimit-denied") != std::string::npos);
  CHECK(r->out.data.find("kill-tried") != std::string::npos);
  // The signal reached nothing that ends the execution: the program ran on to its end.
  CHECK(r->out.data.find("still-running") != std::string::npos);
  CHECK(r->how == verdict::exited);
  CHECK(r->exit_code == 0);
}

TEST_CASE("a taken jail's replacement is armed after its program, or while a long one runs", "[landlock][warm]") {
  REQUIRE_LANDLOCK();
  test_runtime t(landlock_profile(), false, 1);
  REQUIRE(t.wait_armed());
  auto run_async = [&](const std::string& code) {
    auto done = std::make_shared<std::promise<expected<exec_result>>>();
    auto future = done->get_future();
    t.rt->exec_async(shell(code), [done](expected<exec_result> r) { done->set_value(std::move(r)); });
    return future;
  };

  // A short program: while it runs, only the jail it took exists (nothing competes with
  // it for the CPU); after it, a new jail is armed.
  auto asked = std::chrono::steady_clock::now();
  auto short_run = run_async("sleep 0.157; echo corral-short-7171");
  REQUIRE(eventually([] { return !with_arg("0.157").empty(); }, 5s));
  auto ids = warm_lease_ids(t);
  // The pool waits at most 250 ms for the taker: a machine too loaded to see the program
  // start within 200 ms cannot tell waiting from not waiting.
  if (std::chrono::steady_clock::now() - asked < 200ms) {
    CHECK(ids.size() == 1);
    CHECK(t.rt->warm_jails_ready() == 0);
  } else {
    WARN("the program took over 200 ms to start; the wait for its end is not checked");
  }
  REQUIRE(short_run.wait_for(10s) == std::future_status::ready);
  auto first = short_run.get();
  REQUIRE(first);
  CHECK(first->out.data == "corral-short-7171\n");
  CHECK(t.wait_armed());

  // A long program does not keep the pool empty: a jail is armed while it still runs.
  auto long_run = run_async("sleep 3.017; echo corral-long-7272");
  REQUIRE(eventually([] { return !with_arg("3.017").empty(); }, 5s));
  CHECK(t.wait_armed(2500ms));
  CHECK(long_run.wait_for(1ms) == std::future_status::timeout);  // armed before its end
  REQUIRE(long_run.wait_for(10s) == std::future_status::ready);
  auto second = long_run.get();
  REQUIRE(second);
  CHECK(second->out.data == "corral-long-7272\n");
}

TEST_CASE("a request's tighter limits reach the warm jail's cgroups", "[landlock][warm][limits]") {
  REQUIRE_LANDLOCK();
  auto p = landlock_profile();
  p.limit.memory_bytes = 1024 * kMiB;  // what the jail is armed with
  test_runtime t(p, false, 1);
  exec_request req;
  req.language = "python";
  req.code = "print('allocating', flush=True)\nx = bytearray(512 * 1024**2)\nx[::4096] = b'x' * (len(x) // 4096)\nprint('ALLOCATED')\n";
  req.memory_limit_bytes = 64 * kMiB;  // tighter: must hold
  req.timeout = 20s;
  auto r = t.run(req);
  REQUIRE(r);
  CHECK(r->out.data.find("allocating") != std::string::npos);
  CHECK(r->out.data.find("ALLOCATED") == std::string::npos);
  bool stopped = r->how == verdict::out_of_memory || r->err.data.find("MemoryError") != std::string::npos;
  CHECK(stopped);
  CHECK_FALSE(has_step(*r, "namespaces"));

  exec_request bomb = shell("echo start; bomb() { bomb | bomb & }; bomb; sleep 2; echo end");
  bomb.pids_limit = 32;
  bomb.timeout = 10s;
  auto b = t.run(bomb);
  REQUIRE(b);
  CHECK(b->out.data.find("start") != std::string::npos);
  CHECK(b->how == verdict::pids_limit);
}

TEST_CASE("a warm jail's timeout ends the program and every descendant", "[landlock][warm][descendants]") {
  REQUIRE_LANDLOCK();
  test_runtime t(landlock_profile(), false, 1);
  auto req = shell("sleep 31.4159 & echo launched; sleep 31.4159");
  req.timeout = 700ms;
  auto r = t.run(req);
  REQUIRE(r);
  CHECK(r->out.data == "launched\n");
  CHECK(r->how == verdict::timed_out);
  CHECK(eventually([] { return with_arg("31.4159").empty(); }));
}

TEST_CASE("a warm jail killed before use is replaced, and a stopped runtime leaves nothing", "[landlock][warm]") {
  REQUIRE_LANDLOCK();
  auto t = std::make_unique<test_runtime>(landlock_profile(), false, 1);
  REQUIRE(t->wait_armed());
  auto ids = warm_lease_ids(*t);
  REQUIRE(ids.size() == 1);
  auto killed = ids.front();
  auto pids = pids_in(killed);
  REQUIRE_FALSE(pids.empty());  // the helper and the jail's init wait in its cgroup
  for (pid_t pid : pids) ::kill(pid, SIGKILL);

  // Retired (cgroups and record gone) and replaced by a new jail under another id.
  CHECK(eventually([&] { return cgroups_of(killed).empty(); }));
  CHECK(eventually([&] {
    auto now = warm_lease_ids(*t);
    return std::find(now.begin(), now.end(), killed) == now.end();
  }));
  CHECK(t->wait_armed());
  auto r = t->run(program({"/bin/echo", "still-served"}));
  REQUIRE(r);
  CHECK(r->out.data == "still-served\n");

  // Stopping the runtime retires the armed jail: no process, cgroup, record or scratch dir.
  // (The used jail's lease goes just after its result: wait until only the armed one is left.)
  REQUIRE(t->wait_armed());
  REQUIRE(eventually([&] { return warm_lease_ids(*t).size() == 1; }));
  auto armed = warm_lease_ids(*t);
  REQUIRE_FALSE(armed.empty());
  auto armed_pids = pids_in(armed.front());
  REQUIRE_FALSE(armed_pids.empty());
  auto state = t->state.path() + "/state";
  t->rt.reset();
  for (auto& id : armed) CHECK(cgroups_of(id).empty());
  for (pid_t pid : armed_pids) CHECK(eventually([&] { return ::kill(pid, 0) != 0; }));
  CHECK(entries(state + "/scratch").empty());
  CHECK(entries(state + "/leases").empty());
}

// The helper joins its cgroups itself, so one still starting when the runtime stops must
// find them still there: the pool finishes the jail's lease only once the helper has
// exited. Here the helper starts 300 ms late, under a wrapper that records whether its
// lease was still held when it started, and that it ended. A pool that finished the lease
// at once returned from the stop with the wrapper still asleep, and the I/O loop's end
// killed it: nothing recorded.
TEST_CASE("a runtime stopped while a jail's helper is still starting waits for it and leaves nothing",
          "[landlock][warm]") {
  REQUIRE_LANDLOCK();
  temp_dir dir{"corral-slow-helper-"};
  auto started = dir.path() + "/started";
  auto held = dir.path() + "/held";
  auto ended = dir.path() + "/ended";
  auto wrapper = dir.path() + "/corral-exec";
  auto t = std::make_unique<test_runtime>(landlock_profile(), false, 1, [&](runtime_options& o) {
    {
      std::ofstream w(wrapper);
      w << "#!/bin/sh\necho $$ >> " << started << "\nsleep 0.3\n"
        << "ls " << o.state_dir << "/leases | grep -c -- '-w1.lease$' >> " << held << "\n"
        << o.exec_helper << " \"$@\"\nstatus=$?\necho $status >> " << ended << "\nexit $status\n";
    }
    REQUIRE(::chmod(wrapper.c_str(), 0755) == 0);
    o.exec_helper = wrapper;
    o.spare_helper = spare_helper_mode::none;  // every helper the wrapper starts is the pool's
  });
  auto state = t->state.path() + "/state";
  auto owners = entries(state + "/owners");  // the runtime's claim names its instance
  REQUIRE(owners.size() == 1);
  auto id = owners.front() + "-w1";
  REQUIRE(eventually([&] { return !read_text(started).empty(); }));  // the attempt: the helper is starting
  std::vector<pid_t> helpers;
  std::istringstream lines(read_text(started));
  for (pid_t pid; lines >> pid;) helpers.push_back(pid);
  REQUIRE(std::any_of(helpers.begin(), helpers.end(), [](pid_t pid) { return ::kill(pid, 0) == 0; }));
  REQUIRE(read_text(ended).empty());  // still starting when the stop comes

  t->rt.reset();
  for (pid_t pid : helpers) CHECK(::kill(pid, 0) != 0);  // exited and reaped before the stop returned
  CHECK(read_text(held) == "1\n");  // its lease (cgroups and record) outlived its start
  CHECK_FALSE(read_text(ended).empty());  // and it ran to its end (retired by EOF)
  CHECK(cgroups_of(id).empty());
  CHECK(entries(state + "/leases").empty());
  CHECK(entries(state + "/scratch").empty());
}

// The pool keeps as many jails as executions wanted at once within its demand window (a
// miss counts like a take), never more than its ceiling, and retires the rest once that
// demand ages out.
TEST_CASE("the pool grows to the demand it saw, within its ceiling, and shrinks back", "[landlock][warm]") {
  REQUIRE_LANDLOCK();
  test_runtime t(landlock_profile(), false, 3, [](runtime_options& o) {  // a ceiling of three
    o.warm_demand_window = std::chrono::milliseconds(1500);
  });
  auto& rt = t.rt;
  auto records = [&] { return entries(t.state.path() + "/state/leases").size(); };

  // No demand yet: one jail.
  REQUIRE(eventually([&] { return rt->warm_jails_ready() == 1; }, std::chrono::seconds(10)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(rt->warm_jails_ready() == 1);
  CHECK(records() == 1);

  // Four at once: one takes the jail, three start cold; the demand is four, the ceiling three.
  std::vector<std::future<expected<exec_result>>> running;
  for (int i = 0; i < 4; ++i)
    running.push_back(std::async(std::launch::async, [&] { return rt->exec(program({"/bin/sleep", "0.3"})); }));
  for (auto& f : running) {
    auto r = f.get();
    REQUIRE(r);
    CHECK(r->exit_code == 0);
  }
  CHECK(eventually([&] { return rt->warm_jails_ready() == 3; }, std::chrono::seconds(10)));
  CHECK(rt->warm_jails_ready() <= 3);

  // The demand ages out: back to one, the others retired with their cgroups and records.
  CHECK(eventually([&] { return rt->warm_jails_ready() == 1 && records() == 1; }, std::chrono::seconds(10)));
  rt.reset();
  CHECK(records() == 0);
  CHECK(entries(t.state.path() + "/state/scratch").empty());
}
