// The container tier. With a fake engine CLI written by each test (no engine needed): the
// preflight's trial container and its deadline, the argv that carries the boundary, and
// the removal of the container on every exit path (the fake records each call). With a
// real engine where one runs here (podman with an image built locally from busybox): it
// runs, times out, hits the memory limit, and leaves no container behind.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "actors/exec_streaming.hpp"

#include "runtime_fixture.hpp"
#include "tiers/cgroups/cgroup_set.hpp"
#include "tiers/external/container_tier.hpp"
#include "container_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

long read_pid(const std::string& path) {
  long pid = 0;
  std::ifstream(path) >> pid;
  return pid;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A fake engine CLI: logs every call to <dir>/calls (one line each, without the global
// options before the command: --runtime=…, --cgroup-manager=…), answers `info`,
// `rm` and `run` as `run_body` says. For `run`, "$@" is left holding the command after
// the image "fake-image", and the env file's path is in $envfile.
std::string fake_engine(const temp_dir& dir, const std::string& run_body) {
  auto path = dir / "engine";
  std::ofstream(path) << "#!/bin/sh\n"
                         "while [ \"${1#--}\" != \"$1\" ]; do shift; done\n"  // --runtime=…
                         "echo \"$*\" >> " << dir / "calls" << "\n"
                         "cmd=$1; shift\n"
                         "case $cmd in\n"
                         "  info) exit 0 ;;\n"
                         "  rm) exit 0 ;;\n"
                         "  run)\n"
                         "    envfile=; parent=\n"
                         "    while [ $# -gt 0 ] && [ \"$1\" != fake-image ]; do\n"
                         "      case $1 in --env-file=*) envfile=${1#--env-file=} ;;\n"
                         "        --cgroup-parent=*) parent=${1#--cgroup-parent=} ;; esac; shift; done\n"
                         "    shift\n"
                         // As podman puts the container below --cgroup-parent (the lease's
                         // cgroups, whose kill-all ends it), the fake puts its "container" there.
                         "    if [ -n \"$parent\" ]; then for m in /sys/fs/cgroup /sys/fs/cgroup/*; do\n"
                         "      [ -w \"$m$parent/cgroup.procs\" ] && echo $$ > \"$m$parent/cgroup.procs\"; done; fi\n"
                         << run_body << "\n"
                         "    ;;\n"
                         "esac\n"
                         "exit 2\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

std::vector<std::string> calls(const temp_dir& dir) {
  std::vector<std::string> out;
  std::ifstream in(dir / "calls");
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The value of `--name=` in a logged `run` call.
std::string name_in(const std::string& call) {
  auto at = call.find("--name=");
  if (at == std::string::npos) return "";
  auto end = call.find(' ', at);
  return call.substr(at + 7, end - at - 7);
}

profile fake_profile(const std::string& engine) {
  profile p;
  p.tier = "container";
  p.limit.kill_grace = 200ms;
  p.container.engine = engine;
  p.container.image = "fake-image";
  return p;
}

} // namespace

TEST_CASE("the container preflight starts a trial container and reports why it fails", "[container][preflight]") {
  temp_dir dir;
  SECTION("an engine that cannot set the rlimits") {
    auto engine = fake_engine(dir, "echo 'Error: crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted' >&2; exit 126");
    auto st = container_tier(fake_profile(engine), 3s).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("trial container") != std::string::npos);
    CHECK(st.reason.find("RLIMIT_NOFILE") != std::string::npos);
  }
  SECTION("crun on a mixed cgroup layout: the fix is named") {
    auto engine = fake_engine(dir, "echo 'Error: OCI runtime error: crun: cgroups in hybrid mode not supported' >&2; exit 126");
    auto st = container_tier(fake_profile(engine), 3s).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("runtime = \"runc\"") != std::string::npos);
  }
  SECTION("an engine that starts it") {
    auto engine = fake_engine(dir, "exec \"$@\"");
    auto st = container_tier(fake_profile(engine), 3s).available();
    CHECK(st.available);
    INFO(st.reason);
  }
  // On every outcome the trial container is removed by name.
  auto log = calls(dir);
  REQUIRE(log.size() >= 3);
  auto run = std::find_if(log.begin(), log.end(), [](auto& c) { return c.find("run ") != std::string::npos; });
  REQUIRE(run != log.end());
  auto name = name_in(*run);
  CHECK(name.rfind("corral-preflight-", 0) == 0);
  CHECK(contains(log, "rm -f " + name));
}

TEST_CASE("a successful trial is kept for the next runtime, a failure is tried again", "[container][preflight]") {
  if (::geteuid() != 0) { WARN("skipped: the container tier needs root before its trial"); return; }
  temp_dir dir, state;
  auto verdicts = std::make_shared<preflight_verdicts>(state.path() + "/preflight");
  auto preflight = [&](const std::string& engine) {
    container_tier t(fake_profile(engine), 3s);
    t.keep_verdicts(verdicts);
    return t.available();
  };
  auto runs = [&] {
    int n = 0;
    for (auto& c : calls(dir)) n += c.rfind("run ", 0) == 0;
    return n;
  };
  auto engine = fake_engine(dir, "exec \"$@\"");
  CHECK(preflight(engine).available);
  CHECK(runs() == 1);
  // A second runtime (a second CLI start) with the same engine and settings: no trial.
  CHECK(preflight(engine).available);
  CHECK(runs() == 1);
  CHECK(calls(dir).size() == 3);  // info, run, rm: nothing more
  // The engine changes (an upgrade): tried again, and the new success is kept.
  std::ofstream(engine, std::ios::app) << "# upgraded\n";  // its size and mtime change
  CHECK(preflight(engine).available);
  CHECK(runs() == 2);
  CHECK(preflight(engine).available);
  CHECK(runs() == 2);
  // Other settings are another key.
  {
    auto p = fake_profile(engine);
    p.container.runtime = "runc";
    container_tier t(p, 3s);
    t.keep_verdicts(verdicts);
    CHECK(t.available().available);
    CHECK(runs() == 3);
  }
  // A failing engine is never kept: each start tries it.
  temp_dir bad_dir;
  auto bad = fake_engine(bad_dir, "echo 'Error: nope' >&2; exit 126");
  CHECK_FALSE(preflight(bad).available);
  CHECK_FALSE(preflight(bad).available);
  int bad_runs = 0;
  for (auto& c : calls(bad_dir)) bad_runs += c.rfind("run ", 0) == 0;
  CHECK(bad_runs == 2);
}

TEST_CASE("a hung engine or trial container is reported within the deadline and killed", "[container][preflight]") {
  temp_dir dir;
  auto pidfile = dir / "pid";
  SECTION("info hangs") {
    auto path = dir / "engine";
    std::ofstream(path) << "#!/bin/sh\necho $$ > " << pidfile << "\nexec sleep 60\n";
    ::chmod(path.c_str(), 0755);
    auto st = container_tier(fake_profile(path), 500ms).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("did not answer within 500 ms") != std::string::npos);
  }
  SECTION("the trial container hangs") {
    auto engine = fake_engine(dir, "echo $$ > " + pidfile + "; exec sleep 60");
    auto st = container_tier(fake_profile(engine), 800ms).available();
    CHECK_FALSE(st.available);
    CHECK(st.reason.find("did not finish within 800 ms") != std::string::npos);
    auto log = calls(dir);
    REQUIRE(log.size() >= 2);
    CHECK(log.back().rfind("rm -f corral-preflight-", 0) == 0);  // removed although killed
  }
  long pid = read_pid(pidfile);
  REQUIRE(pid > 0);                                 // the fake really ran
  CHECK(::kill(static_cast<pid_t>(pid), 0) != 0);  // and was killed, not left behind
}

TEST_CASE("a missing engine CLI makes the container tier unavailable", "[container][preflight]") {
  temp_dir dir;
  auto p = fake_profile(dir / "no-such-podman");
  auto st = container_tier(p, 1s).available();
  CHECK_FALSE(st.available);
  CHECK(st.reason.find("not found") != std::string::npos);
  p.container.image.clear();
  p.container.engine = fake_engine(dir, "exec \"$@\"");
  auto no_image = container_tier(p, 1s).available();
  CHECK_FALSE(no_image.available);
  CHECK(no_image.reason.find("[sandbox.container] image") != std::string::npos);
}

TEST_CASE("the container argv carries the whole boundary and its cleanup", "[container]") {
  temp_dir dir;
  auto p = fake_profile(fake_engine(dir, "exec \"$@\""));
  p.container.runtime = "runc";
  p.source_roots.push_back({"/srv/src", "/src", false});
  p.output_roots.push_back({"/srv/out", "/out", true});
  container_tier tier(p, 3s);
  REQUIRE(tier.available().available);
  temp_dir scratch{"corral-7-"};
  launch_request req;
  req.argv = {"sh", "-c", "echo hi"};
  req.env = {{"GIVEN", "a value"}};
  req.scratch_dir = scratch.path();
  req.effective.memory_bytes = 64 * kMiB;
  req.effective.pids = 32;
  req.effective.cpu_cores = 0.5;
  lease_grant grant;
  grant.cgroup_path = "/corral/exec-7";
  // Without a lease's cgroups to run in, nothing runs.
  auto no_lease = tier.plan(req, lease_grant{});
  REQUIRE_FALSE(no_lease);
  CHECK(no_lease.error().message.find("no cgroup lease") != std::string::npos);
  auto plan = tier.plan(req, grant);
  REQUIRE(plan);
  auto& a = plan->spec.argv;
  auto priv = container_tier::private_dir(scratch.path());
  auto name = scratch.path().substr(scratch.path().rfind('/') + 1);
  for (const std::string& flag : std::vector<std::string>{"--runtime=runc", "--cgroup-manager=cgroupfs", "run", "--rm", "--network=none", "--read-only", "--user=65534:65534", "--cap-drop=ALL",
        "--security-opt=no-new-privileges", "--cgroup-parent=/corral/exec-7", "--cgroups=no-conmon", "--cgroupns=private",
        "--pids-limit=-1", "--name=" + name, "--volume=" + scratch.path() + ":/work:rw", "--workdir=/work",
        "--volume=/srv/src:/src:ro", "--volume=/srv/out:/out:rw", "--env-file=" + priv + "/env"}) {
    INFO(flag);
    CHECK(contains(a, flag));
  }
  // The lease holds the limits; none of the engine's own may shadow its verdicts.
  for (const char* engine_limit : {"--memory", "--cpus", "--pids-limit="}) {
    INFO(engine_limit);
    CHECK(std::none_of(a.begin(), a.end(), [&](auto& f) {
      return f.rfind(engine_limit, 0) == 0 && f != "--pids-limit=-1";
    }));
  }
  CHECK(plan->spec.cgroup_procs.empty());  // the CLI itself stays outside the lease
  CHECK(plan->isolation.find("around the container") != std::string::npos);
  CHECK(std::any_of(a.begin(), a.end(), [](auto& f) { return f.rfind("--tmpfs=/tmp:", 0) == 0; }));
  // The image, then the command, last; the request's environment is in the file only.
  REQUIRE(a.size() > 4);
  CHECK(std::vector<std::string>(a.end() - 4, a.end()) == std::vector<std::string>{"fake-image", "sh", "-c", "echo hi"});
  for (auto& e : plan->spec.envp) CHECK(e.find("GIVEN") == std::string::npos);
  CHECK(read_text(priv + "/env") == "GIVEN=a value\n");
  // The engine's --rm removes the container when its CLI ends on its own; `rm -f` only
  // when it did not (killed, asked to end, or an engine failure).
  CHECK(std::find(a.begin(), a.end(), "--rm") != a.end());
  REQUIRE(plan->spec.cleanup_unless_exited.size() == 1);
  CHECK(plan->spec.cleanup_unless_exited[0] ==
        std::vector<std::string>{p.container.engine, "--runtime=runc", "--cgroup-manager=cgroupfs", "rm", "-f", name});
  REQUIRE(plan->spec.cleanup.size() == 1);
  CHECK(plan->spec.cleanup[0].back() == priv);
  std::filesystem::remove_all(priv);

  // runc init's own tasks count against the pids limit: a limit it cannot start under is
  // refused with the minimum, before anything is made.
  req.effective.pids = 8;
  auto few = tier.plan(req, grant);
  REQUIRE_FALSE(few);
  CHECK(few.error().kind == failure_kind::invalid_request);
  CHECK(few.error().message.find("at least 16 pids") != std::string::npos);
  CHECK_FALSE(exists(priv));
  req.effective.pids = 32;

  // A value an env file cannot carry is refused, not mangled.
  req.env = {{"BAD", "two\nlines"}};
  auto bad = tier.plan(req, grant);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().kind == failure_kind::invalid_request);
  CHECK_FALSE(exists(priv));
}

TEST_CASE("the container is removed on exit and on timeout", "[container][cleanup]") {
  temp_dir dir;
  auto pidfile = dir / "pid";
  // The fake's "container" is the command itself; it notes its pid and the env file.
  auto engine = fake_engine(dir, "echo $$ > " + pidfile + "; cat \"$envfile\" > " + dir / "env-seen" +
                                     "; exec \"$@\"");
  test_runtime t(fake_profile(engine), false);
  // The run call's container name, and whether `rm -f NAME` came after it.
  auto removal = [&] {
    auto log = calls(dir);
    auto run = std::find_if(log.begin(), log.end(), [](auto& c) {
      return c.find("run ") != std::string::npos && c.find("corral-preflight-") == std::string::npos;
    });
    REQUIRE(run != log.end());
    auto name = name_in(*run);
    REQUIRE_FALSE(name.empty());
    return std::make_pair(name, std::find(run, log.end(), "rm -f " + name) != log.end() &&
                                    log.back() == "rm -f " + name);
  };
  SECTION("exit: the engine's own --rm removed it, no second removal") {
    exec_request r = program({"/bin/sh", "-c", "echo hi; exit 3"});
    r.env["GIVEN"] = "yes";
    auto res = t.run(r);
    REQUIRE(res);
    CHECK(res->how == verdict::exited);
    CHECK(res->exit_code == 3);
    CHECK(res->out.data == "hi\n");
    CHECK(res->tier == "container");
    CHECK(read_text(dir / "env-seen") == "GIVEN=yes\n");
    CHECK_FALSE(removal().second);
  }
  SECTION("an engine failure (125 and up): removed") {
    exec_request r = program({"/bin/sh", "-c", "exit 125"});
    auto res = t.run(r);
    REQUIRE(res);
    CHECK(res->exit_code == 125);
    CHECK(removal().second);
  }
  SECTION("timeout: killed before its --rm could run, so removed") {
    exec_request r = program({"/bin/sleep", "60"});
    r.timeout = 1s;
    auto res = t.run(r);
    REQUIRE(res);
    CHECK(res->how == verdict::timed_out);
    long pid = read_pid(pidfile);
    REQUIRE(pid > 0);
    CHECK(::kill(static_cast<pid_t>(pid), 0) != 0);
    CHECK(removal().second);  // the last call: after the run ended
  }
  SECTION("cancelled: removed") {
    exec_request r = program({"/bin/sleep", "60"});
    r.timeout = 30s;
    exec_control control;
    std::thread canceller([&] {
      std::this_thread::sleep_for(500ms);
      control.cancel();
    });
    auto res = t.rt->exec(r, output_callbacks{}, &control);
    canceller.join();
    REQUIRE(res);
    CHECK(res->how == verdict::cancelled);
    CHECK(removal().second);
  }
  for (auto& e : entries(t.state.path() + "/state/scratch")) CHECK(e.find(".container") == std::string::npos);
}

namespace {

#define REQUIRE_PODMAN()                                                   \
  do {                                                                     \
    static const std::string why = podman_unavailable();                   \
    if (!why.empty()) {                                                    \
      WARN("skipped: no container engine runs here: " << why);             \
      return;                                                              \
    }                                                                      \
  } while (0)

// Containers of this runtime's executions that the engine still knows.
std::string containers_named(const std::string& prefix) {
  auto all = shell_output("podman ps -a --format '{{.Names}}'");
  std::string found;
  std::size_t start = 0;
  while (start < all.size()) {
    auto end = all.find('\n', start);
    if (end == std::string::npos) end = all.size();
    auto name = all.substr(start, end - start);
    if (name.rfind(prefix, 0) == 0) found += name + " ";
    start = end + 1;
  }
  return found;
}

struct podman_fixture {
  temp_dir host{"corral-container-"};
  std::string out;
  std::unique_ptr<test_runtime> t;
  podman_fixture() {
    ::chmod(host.path().c_str(), 0755);
    out = host / "out";
    ::mkdir(out.c_str(), 0777);
    ::chmod(out.c_str(), 0777);
    auto p = podman_profile();
    p.output_roots.push_back({out, "/out", true});
    t = std::make_unique<test_runtime>(p, false);
  }
  exec_result run(exec_request r) {
    if (!r.timeout) r.timeout = 30s;
    auto res = t->run(r);
    if (!res) FAIL("exec failed: " << res.error().describe());
    return *res;
  }
  void check_nothing_left(const exec_result& r) {
    CHECK(containers_named("corral-" + r.execution_id + "-").empty());
    for (auto& e : entries(t->state.path() + "/state/scratch")) CHECK(e.find(".container") == std::string::npos);
    // Neither the lease's cgroups nor those the engine made below them, in any hierarchy.
    for (auto& m : read_cgroup_mounts()) {
      INFO(m.point);
      CHECK_FALSE(exists(m.point + "/corral/" + r.execution_id));
    }
  }
};

} // namespace

TEST_CASE("podman runs the container tier: read-only, nobody, no network", "[container][podman]") {
  REQUIRE_PODMAN();
  podman_fixture f;
  auto req = shell("");
  req.language = "argv";
  req.argv = {"sh", "-c",
              "echo hello; id -u; pwd; echo x > /marker 2>/dev/null && echo WROTE || echo refused; "
              "echo ok > /out/written; echo ok > /work/scratch; ip -o link | grep -vc ' lo:'; echo \"$GIVEN\""};
  req.env["GIVEN"] = "yes";
  auto r = f.run(req);
  INFO(r.err.data);
  CHECK(r.how == verdict::exited);
  CHECK(r.exit_code == 0);
  CHECK(r.tier == "container");
  // No interface but loopback (grep -vc counts 0 others and exits 1, hence the "0").
  CHECK(r.out.data == "hello\n65534\n/work\nrefused\n0\nyes\n");
  CHECK(read_text(f.out + "/written") == "ok\n");
  f.check_nothing_left(r);
  // The request's cwd, absolute or relative to /work, is the container's working directory.
  auto where = shell("");
  where.language = "argv";
  where.argv = {"pwd"};
  where.cwd = "/out";
  CHECK(f.run(where).out.data == "/out\n");
  where.cwd = ".";
  CHECK(f.run(where).out.data == "/work\n");
}

TEST_CASE("a timed-out podman execution leaves no container behind", "[container][podman][timeout]") {
  REQUIRE_PODMAN();
  podman_fixture f;
  auto req = program({"sh", "-c", "echo started; exec sleep 60"});
  req.timeout = 3s;
  auto r = f.run(req);
  CHECK(r.how == verdict::timed_out);
  CHECK(r.out.data == "started\n");
  f.check_nothing_left(r);
  CHECK(tracked_after_settling(*f.t->rt) == 0);
}

TEST_CASE("the lease's memory limit stops a podman execution with the OOM verdict", "[container][podman][limits]") {
  REQUIRE_PODMAN();
  podman_fixture f;
  // A shell variable holding 200 MB of 'a' against a 64 MiB limit.
  auto req = program({"sh", "-c", "echo started; x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ALLOCATED ${#x}"});
  req.memory_limit_bytes = 64 * kMiB;
  auto r = f.run(req);
  INFO(r.out.data << r.err.data);
  CHECK(r.out.data.find("started") == 0);                       // the attempt ran
  CHECK(r.out.data.find("ALLOCATED") == std::string::npos);     // and did not get its memory
  CHECK(r.how == verdict::out_of_memory);
  // The usage is the container's own: it reached the limit (the CLI's rusage never would).
  CHECK(r.usage.peak_memory_bytes >= 48 * kMiB);
  CHECK(r.usage.peak_memory_bytes <= 64 * kMiB);
  f.check_nothing_left(r);
}

TEST_CASE("a podman execution that stays under its memory limit is not called out of memory",
          "[container][podman][limits]") {
  REQUIRE_PODMAN();
  podman_fixture f;
  auto req = program({"sh", "-c", "x=$(head -c 8000000 /dev/zero | tr '\\0' a); echo ALLOCATED ${#x}"});
  req.memory_limit_bytes = 64 * kMiB;
  auto r = f.run(req);
  INFO(r.err.data);
  CHECK(r.out.data == "ALLOCATED 8000000\n");
  CHECK(r.how == verdict::exited);
  CHECK(r.usage.peak_memory_bytes >= 8000000);  // the shell's string, counted in the container
  f.check_nothing_left(r);
}

TEST_CASE("a running container's processes are inside the execution's cgroups", "[container][podman][limits]") {
  REQUIRE_PODMAN();
  podman_fixture f;
  const std::string marker = "corral-in-lease-" + std::to_string(::getpid());
  // The marker is the shell's $0, one whole argument the test finds from outside; the
  // trailing ':' keeps the shell from exec'ing sleep in its place.
  auto req = program({"sh", "-c", "sleep 20; :", marker});
  req.timeout = 25s;
  std::optional<exec_result> r;
  std::string error;  // Catch2 asserts on this thread only
  std::thread runner([&] {
    auto res = f.t->run(req);
    if (res) r = *res;
    else error = res.error().describe();
  });
  std::vector<std::string> holders;  // the cgroup.procs files listing the shell, per hierarchy
  pid_t inside = 0;                  // the shell (the engine CLI's argv holds the marker too)
  bool found = eventually([&] {
    holders.clear();
    auto candidates = with_arg(marker);
    for (auto& m : read_cgroup_mounts()) {
      std::vector<std::string> dirs;
      for (auto& id : entries(m.point + "/corral"))
        for (auto& child : entries(m.point + "/corral/" + id))
          if (std::ifstream(m.point + "/corral/" + id + "/" + child + "/cgroup.procs"))
            dirs.push_back(m.point + "/corral/" + id + "/" + child);
      for (auto& d : dirs) {
        std::istringstream in(read_text(d + "/cgroup.procs"));
        for (long pid; in >> pid;)
          for (pid_t candidate : candidates)
            if (pid == candidate) {
              holders.push_back(d);
              inside = candidate;
            }
      }
    }
    return !holders.empty();
  }, 30s);
  if (inside > 0) ::kill(inside, SIGKILL);  // ends the run early; else the timeout does
  runner.join();
  INFO(error);
  REQUIRE(r);
  CHECK(found);
  INFO(r->out.data << r->err.data);
  // Found below the lease named after this execution, in the memory and pids hierarchies.
  std::string listed;
  for (auto& h : holders) listed += h + "\n";
  INFO("listed in:\n" << listed);
  bool in_memory = false, in_pids = false;
  for (auto& h : holders) {
    CHECK(h.find("/corral/" + r->execution_id + "/") != std::string::npos);
    in_memory = in_memory || h.find("/memory/") != std::string::npos;
    in_pids = in_pids || h.find("/pids/") != std::string::npos;
  }
  CHECK(in_memory);
  CHECK(in_pids);
  f.check_nothing_left(*r);
}

TEST_CASE("the engine's pids limit bounds a podman execution", "[container][podman][limits]") {
  REQUIRE_PODMAN();
  podman_fixture f;
  // busybox sh gives up at the first fork the limit refuses.
  auto req = program({"sh", "-c", "echo trying; for i in $(seq 100); do sleep 10 & done; echo ALL-STARTED"});
  req.pids_limit = 16;
  req.timeout = 20s;
  auto r = f.run(req);
  INFO(r.out.data << r.err.data);
  CHECK(r.out.data == "trying\n");  // the attempt ran
  CHECK(r.err.data.find("can't fork") != std::string::npos);  // and the limit stopped it
  CHECK(r.exit_code != 0);
  CHECK(r.how == verdict::pids_limit);
  f.check_nothing_left(r);
}
