// Workspaces (actors/workspaces/): a named /work that persists between executions. Each case
// asserts from outside (the workspace's directory on the host) and from inside (what the
// next execution sees): files persist, a package installed by one execution imports in the
// next, a restarted runtime finds them again, idle and ended ones are removed, and another
// principal, another workspace or a wider limit gets nothing.
#include <chrono>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "landlock_fixture.hpp"
#include "runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

profile landlock_profile() {
  profile p;
  p.tier = "landlock";
  p.limit.kill_grace = 200ms;
  return p;
}

exec_request in_workspace(const std::string& workspace, const std::string& code) {
  auto r = shell(code);
  r.workspace = workspace;
  return r;
}

std::string files_of(const test_runtime& t, const std::string& id) { return t.rt->workspaces_dir() + "/" + id + "/root"; }

} // namespace

TEST_CASE("a file one execution writes in a workspace, the next reads, and the host sees it there",
          "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  test_runtime t(landlock_profile(), false);
  workspace_options o;
  o.name = "notes";
  auto w = t.rt->create_workspace(o);
  REQUIRE(w);
  CHECK(w->record.name == "notes");
  CHECK(valid_workspace_id(w->record.id));

  auto first = t.rt->exec(in_workspace("notes", "echo hello > /work/a.txt; mkdir -p /work/d; echo deep > /work/d/b"));
  REQUIRE(first);
  CHECK(first->exit_code == 0);
  CHECK(first->workspace == w->record.id);
  CHECK(std::find(first->not_enforced.begin(), first->not_enforced.end(), "workspace_disk_quota") !=
        first->not_enforced.end());
  CHECK(read_text(files_of(t, w->record.id) + "/a.txt") == "hello\n");

  auto second = t.rt->exec(in_workspace(w->record.id, "cat /work/a.txt /work/d/b; pwd"));
  REQUIRE(second);
  CHECK(second->out.data == "hello\ndeep\n/work\n");
  // An execution without the workspace gets a fresh, empty /work as before.
  auto fresh = t.rt->exec(shell("ls -A /work | wc -l"));
  REQUIRE(fresh);
  CHECK(fresh->out.data == "0\n");
}

TEST_CASE("a package pip installs into a workspace imports in the next execution", "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  if (!exists("/usr/lib/python3/dist-packages/pip")) {
    WARN("skipped: Debian's python3-pip is not installed (scripts/setup installs it)");
    return;
  }
  test_runtime t(landlock_profile(), false);
  auto w = t.rt->create_workspace({});
  REQUIRE(w);
  const auto& id = w->record.id;
  // A wheel made inside the workspace: a zip with the module and its dist-info.
  auto make_wheel = in_workspace(id, "python3 - <<'EOF'\n"
                                     "import zipfile\n"
                                     "w = zipfile.ZipFile('/work/hello_ws-1.0-py3-none-any.whl', 'w')\n"
                                     "w.writestr('hello_ws.py', 'GREETING = \"installed in a workspace\"\\n')\n"
                                     "d = 'hello_ws-1.0.dist-info/'\n"
                                     "w.writestr(d + 'METADATA', 'Metadata-Version: 2.1\\nName: hello-ws\\nVersion: 1.0\\n')\n"
                                     "w.writestr(d + 'WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n"
                                     "w.writestr(d + 'RECORD', '')\n"
                                     "w.close()\n"
                                     "EOF");
  auto made = t.rt->exec(make_wheel);
  REQUIRE(made);
  REQUIRE(made->exit_code == 0);
  auto install = in_workspace(id, "HOME=/work python3 -m pip install --no-index --no-cache-dir --disable-pip-version-check "
                                  "--target /work/lib /work/hello_ws-1.0-py3-none-any.whl 2>&1 | tail -1");
  auto installed = t.rt->exec(install);
  if (!installed) FAIL(installed.error().describe());
  INFO(installed->out.data << installed->err.data);
  REQUIRE(installed->exit_code == 0);
  CHECK(exists(files_of(t, id) + "/lib/hello_ws.py"));
  auto imported = t.rt->exec(in_workspace(id, "PYTHONPATH=/work/lib python3 -c 'import hello_ws; print(hello_ws.GREETING)'"));
  REQUIRE(imported);
  CHECK(imported->out.data == "installed in a workspace\n");
}

TEST_CASE("a restarted runtime finds its workspaces with their files", "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  temp_dir shared("corral-ws-restart-");
  std::string id;
  auto start = [&] {
    runtime_options o;
    o.prof = landlock_profile();
    o.exec_helper = CORRAL_TEST_HELPER;
    o.warm_jails = 0;
    o.state_dir = shared.path() + "/state";
    o.workspaces_dir = shared.path() + "/workspaces";
    auto rt = runtime::start(std::move(o));
    if (!rt) FAIL(rt.error().describe());
    return std::move(*rt);
  };
  {
    auto rt = start();
    workspace_options o;
    o.name = "kept";
    auto w = rt->create_workspace(o);
    REQUIRE(w);
    id = w->record.id;
    auto r = rt->exec(in_workspace("kept", "echo survived > /work/state.txt"));
    REQUIRE(r);
    REQUIRE(r->exit_code == 0);
  }
  auto rt = start();
  auto listed = rt->list_workspaces();
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].record.id == id);
  CHECK(listed[0].record.name == "kept");
  auto r = rt->exec(in_workspace("kept", "cat /work/state.txt"));
  REQUIRE(r);
  CHECK(r->out.data == "survived\n");
  REQUIRE(rt->end_workspace("kept"));
  CHECK_FALSE(exists(shared.path() + "/workspaces/" + id));
}

TEST_CASE("ending a workspace removes its files unless they are kept; an idle one ends on its own",
          "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  test_runtime t(landlock_profile(), false);
  auto dir_of = [&](const workspace_info& w) { return t.rt->workspaces_dir() + "/" + w.record.id; };

  auto ended = t.rt->create_workspace({});
  REQUIRE(ended);
  REQUIRE(t.rt->exec(in_workspace(ended->record.id, "echo x > /work/x"))->exit_code == 0);
  REQUIRE(exists(dir_of(*ended) + "/root/x"));
  REQUIRE(t.rt->end_workspace(ended->record.id));
  CHECK_FALSE(exists(dir_of(*ended)));
  // Gone for every later call, named as absent.
  auto again = t.rt->exec(in_workspace(ended->record.id, "true"));
  REQUIRE_FALSE(again);
  CHECK_THAT(again.error().message, Catch::Contains("no workspace"));

  auto kept = t.rt->create_workspace({});
  REQUIRE(kept);
  REQUIRE(t.rt->exec(in_workspace(kept->record.id, "echo y > /work/y"))->exit_code == 0);
  REQUIRE(t.rt->end_workspace(kept->record.id, true));
  CHECK(read_text(dir_of(*kept) + "/root/y") == "y\n");
  CHECK(t.rt->list_workspaces().empty());

  workspace_options quick;
  quick.idle_timeout = 300ms;
  auto idle = t.rt->create_workspace(quick);
  REQUIRE(idle);
  REQUIRE(exists(dir_of(*idle)));
  CHECK(eventually([&] { return !exists(dir_of(*idle)); }));
  CHECK_FALSE(t.rt->inspect_workspace(idle->record.id));
}

TEST_CASE("another principal, another workspace and a wider limit get nothing of a workspace",
          "[landlock][workspace][escape]") {
  REQUIRE_LANDLOCK();
  test_runtime t(landlock_profile(), false);
  workspace_options small;
  small.memory_bytes = 64ull << 20;
  auto mine = t.rt->create_workspace(small, "uid:1000");
  REQUIRE(mine);
  auto other = t.rt->create_workspace({}, "uid:1001");
  REQUIRE(other);
  auto mine_req = in_workspace(mine->record.id, "echo secret > /work/secret; ls -A /work");
  mine_req.principal = "uid:1000";
  auto wrote = t.rt->exec(mine_req);
  REQUIRE(wrote);
  REQUIRE(wrote->out.data == "secret\n");

  // Another principal naming it: the same answer as a workspace that does not exist.
  auto stolen = in_workspace(mine->record.id, "cat /work/secret");
  stolen.principal = "uid:1001";
  auto refused = t.rt->exec(stolen);
  REQUIRE_FALSE(refused);
  auto absent = in_workspace("w-000000000000", "true");
  absent.principal = "uid:1001";
  auto absent_r = t.rt->exec(absent);
  REQUIRE_FALSE(absent_r);
  CHECK(refused.error().message == "no workspace '" + mine->record.id + "' here");
  CHECK_THAT(absent_r.error().message, Catch::Contains("no workspace 'w-000000000000' here"));
  CHECK_FALSE(t.rt->inspect_workspace(mine->record.id, "uid:1001"));
  CHECK(t.rt->list_workspaces("uid:1001").size() == 1);

  // From inside the other workspace: its own empty /work, and no way to the host's copy.
  auto looking = in_workspace(other->record.id,
                              "ls -A /work | wc -l; cat " + files_of(t, mine->record.id) + "/secret 2>&1 | head -c 0;"
                              " test -e " + files_of(t, mine->record.id) + "/secret && echo visible || echo hidden");
  looking.principal = "uid:1001";
  auto seen = t.rt->exec(looking);
  REQUIRE(seen);
  CHECK(seen->out.data == "0\nhidden\n");

  // Its limits only narrow: more memory than the workspace's is refused, none asked gets it.
  auto wide = in_workspace(mine->record.id, "true");
  wide.principal = "uid:1000";
  wide.memory_limit_bytes = 128ull << 20;
  auto widened = t.rt->exec(wide);
  REQUIRE_FALSE(widened);
  CHECK(widened.error().kind == failure_kind::refused);
  CHECK_THAT(widened.error().message, Catch::Contains("more than its workspace's"));

  // A name that could pass for a path or an id is refused at create.
  workspace_options bad;
  bad.name = "../etc";
  CHECK_FALSE(t.rt->create_workspace(bad));
  bad.name = "w-0123456789ab";
  CHECK_FALSE(t.rt->create_workspace(bad));
}
