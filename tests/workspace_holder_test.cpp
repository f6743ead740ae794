// A workspace's holder (actors/workspaces/workspace_holder.hpp): every step enters one jail
// that outlives it, under one cgroup budget. Each case asserts from outside (the host's
// /proc, the cgroup tree, the lease records) as well as from inside: a server one step
// leaves running answers the next over loopback, /tmp is shared, what is not asked to stay
// ends with its step, pause freezes a spinner and resume lets it go on, the budget bounds
// all steps together, and ending the workspace or the runtime leaves nothing behind.
#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "landlock_fixture.hpp"
#include "runtime_fixture.hpp"
#include "workspace_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

exec_request leaving_running(const std::string& workspace, const std::string& code) {
  auto r = in_workspace(workspace, code);
  r.leave_running = true;
  return r;
}

// CPU ticks (user + system) of a host pid, from /proc/<pid>/stat.
std::uint64_t cpu_ticks(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  std::uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return utime + stime;
}

bool listed(const std::vector<workspace_process>& ps, const std::string& part) {
  return std::any_of(ps.begin(), ps.end(), [&](auto& p) { return p.command.find(part) != std::string::npos; });
}

} // namespace

TEST_CASE("a server one execution leaves running in a workspace answers the next over loopback, and is listed and killed",
          "[landlock][workspace][holder]") {
  REQUIRE_LANDLOCK();
  one_workspace f;
  auto& t = f.t;
  const auto& id = f.id;

  // Its output is not redirected: the step's pipes stay with it after the step ends.
  auto start = t.rt->exec(leaving_running(id, "python3 -m http.server 18765 --bind 127.0.0.1 & echo started"));
  REQUIRE(start);
  CHECK(start->exit_code == 0);
  CHECK(start->out.data == "started\n");
  CHECK_THAT(start->isolation, Catch::Contains("in a workspace"));

  auto fetch = in_workspace(id,
                            "python3 - <<'EOF'\n"
                            "import time, urllib.request\n"
                            "for _ in range(100):\n"
                            "    try:\n"
                            "        print(urllib.request.urlopen('http://127.0.0.1:18765/').status); break\n"
                            "    except OSError:\n"
                            "        time.sleep(0.05)\n"
                            "else:\n"
                            "    print('no answer')\n"
                            "EOF");
  auto answered = t.rt->exec(fetch);
  REQUIRE(answered);
  CHECK(answered->out.data == "200\n");

  // From outside: the server is a host process, and the workspace lists it by its pid inside.
  auto ps = t.rt->workspace_processes(id);
  REQUIRE(ps);
  REQUIRE(listed(*ps, "http.server"));
  auto server = std::find_if(ps->begin(), ps->end(), [](auto& p) { return p.command.find("http.server") != std::string::npos; });
  CHECK(server->pid > 1);
  CHECK(server->ppid == 1);  // reparented to the holder's init when its step ended
  CHECK_FALSE(with_arg("http.server").empty());

  REQUIRE(t.rt->signal_in_workspace(id, server->pid, SIGTERM));
  CHECK(eventually([&] { return with_arg("http.server").empty(); }));
  auto after = t.rt->workspace_processes(id);
  REQUIRE(after);
  CHECK_FALSE(listed(*after, "http.server"));
  auto refused = t.rt->exec(fetch);
  REQUIRE(refused);
  CHECK(refused->out.data == "no answer\n");

  // Not a process of the workspace: refused, nothing signalled.
  auto nobody = t.rt->signal_in_workspace(id, 1, SIGKILL);
  REQUIRE_FALSE(nobody);
  CHECK_THAT(nobody.error().message, Catch::Contains("no process 1"));
  REQUIRE(t.rt->end_workspace(id));
}

TEST_CASE("without leave_running a background process ends with its execution, and /tmp is the workspace's",
          "[landlock][workspace][holder]") {
  REQUIRE_LANDLOCK();
  one_workspace f;
  auto& t = f.t;
  const auto& id = f.id;

  auto r = t.rt->exec(in_workspace(id, "sleep 3001 & echo kept > /tmp/note; echo $!"));
  REQUIRE(r);
  CHECK(r->exit_code == 0);
  CHECK(with_arg("3001").empty());
  auto ps = t.rt->workspace_processes(id);
  REQUIRE(ps);
  CHECK(ps->empty());

  auto next = t.rt->exec(in_workspace(id, "cat /tmp/note"));
  REQUIRE(next);
  CHECK(next->out.data == "kept\n");
  // Another workspace and a one-shot execution have their own /tmp.
  auto one_shot = t.rt->exec(shell("cat /tmp/note"));
  REQUIRE(one_shot);
  CHECK(one_shot->exit_code != 0);
  // leave_running needs a workspace.
  auto r2 = shell("true");
  r2.leave_running = true;
  auto no_workspace = t.rt->exec(r2);
  REQUIRE_FALSE(no_workspace);
  CHECK_THAT(no_workspace.error().message, Catch::Contains("needs a workspace"));
  REQUIRE(t.rt->end_workspace(id));
}

TEST_CASE("pause freezes what runs in a workspace and resume lets it go on", "[landlock][workspace][holder]") {
  REQUIRE_LANDLOCK();
  one_workspace f;
  auto& t = f.t;
  const auto& id = f.id;

  REQUIRE(t.rt->exec(leaving_running(id, "sh -c 'while :; do :; done' spinner-7311 >/dev/null 2>&1 &"))->exit_code == 0);
  REQUIRE(eventually([&] { return with_arg("spinner-7311").size() == 1; }));
  pid_t spinner = with_arg("spinner-7311").front();
  REQUIRE(eventually([&] { return cpu_ticks(spinner) > 0; }));

  auto paused = t.rt->pause_workspace(id);
  REQUIRE(paused);
  CHECK(paused->phase == workspace_phase::paused);
  CHECK(paused->record.paused);
  auto frozen_at = cpu_ticks(spinner);
  std::this_thread::sleep_for(400ms);
  CHECK(cpu_ticks(spinner) == frozen_at);  // the attempt ran for 400 ms and used no CPU

  // Nothing starts in a paused workspace; its files stay readable.
  auto refused = t.rt->exec(in_workspace(id, "true"));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == failure_kind::conflict);
  CHECK_THAT(refused.error().message, Catch::Contains("paused"));
  file_call stat;
  stat.what = file_call::op::list;
  stat.path = "/work";
  CHECK(t.rt->workspace_file(id, stat));

  auto resumed = t.rt->resume_workspace(id);
  REQUIRE(resumed);
  CHECK(resumed->phase == workspace_phase::ready);
  CHECK(eventually([&] { return cpu_ticks(spinner) > frozen_at; }));
  CHECK(t.rt->exec(in_workspace(id, "true"))->exit_code == 0);

  // Ending a paused workspace kills the frozen processes too.
  REQUIRE(t.rt->pause_workspace(id));
  REQUIRE(t.rt->end_workspace(id));
  CHECK(eventually([&] { return with_arg("spinner-7311").empty(); }));
}

TEST_CASE("a workspace's pids budget bounds its steps together, and the step that meets it says so",
          "[landlock][workspace][holder]") {
  REQUIRE_LANDLOCK();
  test_runtime t(workspace_profile(), false);
  workspace_options o;
  o.pids = 40;
  auto w = t.rt->create_workspace(o);
  REQUIRE(w);
  const auto& id = w->record.id;

  // 20 sleepers stay behind; a later step may fork only what the budget has left.
  auto first = t.rt->exec(leaving_running(id, "for i in $(seq 20); do sleep 3002 & done"));
  REQUIRE(first);
  CHECK(first->how == verdict::exited);
  REQUIRE(eventually([&] { return with_arg("3002").size() == 20; }));

  auto second = t.rt->exec(in_workspace(id, "n=0; for i in $(seq 30); do sleep 3003 & n=$((n+1)); done 2>/dev/null; echo $n"));
  REQUIRE(second);
  CHECK(second->how == verdict::pids_limit);
  CHECK(with_arg("3003").empty());  // ended with its step
  CHECK(with_arg("3002").size() == 20);  // the first step's stay

  // The same step in a fresh workspace of the same budget forks all 30: the budget is shared.
  auto fresh = t.rt->create_workspace(o);
  REQUIRE(fresh);
  auto alone = t.rt->exec(in_workspace(fresh->record.id, "for i in $(seq 30); do sleep 3004 & done; echo ok"));
  REQUIRE(alone);
  CHECK(alone->how == verdict::exited);
  CHECK(alone->out.data == "ok\n");

  REQUIRE(t.rt->end_workspace(id));
  REQUIRE(t.rt->end_workspace(fresh->record.id));
  CHECK(eventually([&] { return with_arg("3002").empty(); }));
}

TEST_CASE("ending a workspace, or the runtime, leaves no process, cgroup or lease record of it",
          "[landlock][workspace][holder]") {
  REQUIRE_LANDLOCK();
  temp_dir shared("corral-ws-holder-");
  auto start = [&] {
    runtime_options o;
    o.prof = workspace_profile();
    o.exec_helper = CORRAL_TEST_HELPER;
    o.state_dir = shared.path() + "/state";
    o.workspaces_dir = shared.path() + "/workspaces";
    auto rt = runtime::start(std::move(o));
    if (!rt) FAIL(rt.error().describe());
    return std::move(*rt);
  };
  auto leases_naming = [&](const std::string& id) {
    std::vector<std::string> out;
    for (auto& name : entries(shared.path() + "/state/leases"))
      if (name.find(id) != std::string::npos) out.push_back(name);
    return out;
  };
  std::string ended_id, kept_id;
  {
    auto rt = start();
    auto w = rt->create_workspace({});
    REQUIRE(w);
    ended_id = w->record.id;
    REQUIRE(rt->exec(leaving_running(ended_id, "sleep 3005 &"))->exit_code == 0);
    REQUIRE(eventually([&] { return with_arg("3005").size() == 1; }));
    CHECK(leases_naming(ended_id).size() == 1);
    REQUIRE(rt->end_workspace(ended_id));
    CHECK(with_arg("3005").empty());
    CHECK(leases_naming(ended_id).empty());

    auto k = rt->create_workspace({});
    REQUIRE(k);
    kept_id = k->record.id;
    REQUIRE(rt->exec(leaving_running(kept_id, "echo data > /work/f; sleep 3006 &"))->exit_code == 0);
    REQUIRE(eventually([&] { return with_arg("3006").size() == 1; }));
  }
  // The runtime is gone: what ran in its workspaces went with it, nothing is left of their
  // cgroups, and a new runtime finds the files and nothing running.
  CHECK(eventually([&] { return with_arg("3006").empty(); }));
  for (auto& h : entries("/sys/fs/cgroup"))
    for (auto& dir : entries("/sys/fs/cgroup/" + h + "/corral")) {
      CHECK(dir.find(ended_id) == std::string::npos);
      CHECK(dir.find(kept_id) == std::string::npos);
    }
  auto rt = start();
  REQUIRE(rt->list_workspaces().size() == 1);
  auto ps = rt->workspace_processes(kept_id);
  REQUIRE(ps);
  CHECK(ps->empty());
  auto r = rt->exec(in_workspace(kept_id, "cat /work/f; pgrep -c sleep || true"));
  REQUIRE(r);
  CHECK(r->out.data == "data\n0\n");
  REQUIRE(rt->end_workspace(kept_id));
  CHECK(leases_naming(kept_id).empty());
}

TEST_CASE("a program in a workspace reaches neither its init, its step's supervisor nor a host process",
          "[landlock][workspace][holder]") {
  REQUIRE_LANDLOCK();
  one_workspace f;
  auto& t = f.t;
  const auto& id = f.id;
  // A host process of the same kind a workspace runs, outside it.
  pid_t host = ::fork();
  REQUIRE(host >= 0);
  if (host == 0) {
    ::execl("/bin/sleep", "sleep", "3010", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  REQUIRE(eventually([&] { return with_arg("3010").size() == 1; }));

  auto r = t.rt->exec(in_workspace(id, "kill -0 " + std::to_string(host) + " 2>/dev/null; echo host=$?; "
                                        "kill -9 1; kill -TERM 1; echo init-signalled; "
                                        "ls /proc/$PPID/fd >/dev/null 2>&1; echo supervisor-fds=$?; "
                                        "cat /proc/$PPID/environ >/dev/null 2>&1; echo supervisor-env=$?"));
  REQUIRE(r);
  CHECK(r->out.data == "host=1\ninit-signalled\nsupervisor-fds=2\nsupervisor-env=1\n");
  // The attempts ran; the init and the host process are untouched, the workspace works on.
  CHECK(with_arg("3010").size() == 1);
  auto next = t.rt->exec(in_workspace(id, "echo still"));
  REQUIRE(next);
  CHECK(next->out.data == "still\n");
  // Nor through the API: a host pid is not a process of the workspace.
  auto refused = t.rt->signal_in_workspace(id, host, SIGKILL);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == failure_kind::not_found);
  CHECK(with_arg("3010").size() == 1);

  ::kill(host, SIGKILL);
  ::waitpid(host, nullptr, 0);
  REQUIRE(t.rt->end_workspace(id));
}
