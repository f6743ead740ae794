// Workspaces (actors/workspaces/): a named /work that persists between executions. Each case
// asserts from outside (the workspace's directory on the host) and from inside (what the
// next execution sees): files persist, a package installed by one execution imports in the
// next, a restarted runtime finds them again, idle and ended ones are removed, and another
// principal, another workspace or a wider limit gets nothing.
#include <chrono>
#include <fstream>
#include <sys/stat.h>
#include <thread>

#include <catch2/catch.hpp>

#include "landlock_fixture.hpp"
#include "tiers/workspace/hash_cache.hpp"
#include "runtime_fixture.hpp"
#include "workspace_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

TEST_CASE("a file one execution writes in a workspace, the next reads, and the host sees it there",
          "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  test_runtime t(workspace_profile(), false);
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
  one_workspace f;
  auto& t = f.t;
  const auto& id = f.id;
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

TEST_CASE("a restarted runtime finds its workspaces with their files, and removes an unfinished create",
          "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  temp_dir shared("corral-ws-restart-");
  std::string id;
  auto start = [&] {
    runtime_options o;
    o.prof = workspace_profile();
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
  // A create (or a restore from a snapshot) the runtime stopped in: files, no record yet.
  auto unfinished = shared.path() + "/workspaces/w-0123456789ab";
  std::filesystem::create_directories(unfinished + "/root");
  std::ofstream(unfinished + "/root/half") << "unpacked before the stop";
  auto rt = start();
  auto listed = rt->list_workspaces();  // answered after the registry's adoption at start
  CHECK_FALSE(exists(unfinished));
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].record.id == id);
  CHECK(listed[0].record.name == "kept");
  auto r = rt->exec(in_workspace("kept", "cat /work/state.txt"));
  REQUIRE(r);
  CHECK(r->out.data == "survived\n");
  REQUIRE(rt->end_workspace("kept"));
  CHECK_FALSE(exists(shared.path() + "/workspaces/" + id));
}

TEST_CASE("ending a workspace removes its files unless they are kept, and an idle one ends on its own",
          "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  test_runtime t(workspace_profile(), false);
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
  test_runtime t(workspace_profile(), false);
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

  // A workspace's own limits narrow the profile's as a request's do.
  workspace_options huge;
  huge.memory_bytes = 1ull << 40;
  auto too_big = t.rt->create_workspace(huge);
  REQUIRE_FALSE(too_big);
  CHECK(too_big.error().kind == failure_kind::refused);
  CHECK_THAT(too_big.error().message, Catch::Contains("memory"));

  // A name that could pass for a path or an id is refused at create.
  workspace_options bad;
  bad.name = "../etc";
  CHECK_FALSE(t.rt->create_workspace(bad));
  bad.name = "w-0123456789ab";
  CHECK_FALSE(t.rt->create_workspace(bad));
}

namespace {

file_call file_op(file_call::op what, std::string path, std::string data = {}) {
  file_call c;
  c.what = what;
  c.path = std::move(path);
  c.data = std::move(data);
  return c;
}

} // namespace

TEST_CASE("files written through the API are the jail user's, byte for byte, and read back in pieces",
          "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  one_workspace f;
  auto& t = f.t;
  const auto& id = f.id;
  using op = file_call::op;

  std::string every_byte;
  for (int i = 0; i < 256; ++i) every_byte.push_back(static_cast<char>(i));
  REQUIRE(t.rt->workspace_file(id, file_op(op::write, "/work/empty")));
  auto bin = file_op(op::write, "bin/all", every_byte);
  bin.parents = true;
  bin.mode = 0600;
  auto written = t.rt->workspace_file(id, bin);
  REQUIRE(written);
  CHECK(written->entry.size == 256);
  CHECK(written->entry.mode == 0600);
  // 64 MiB in 4 MiB pieces: a write, then appends.
  std::string piece(kMaxFilePiece, 'x');
  for (std::size_t i = 0; i < piece.size(); i += 4096) piece[i] = static_cast<char>('a' + (i / 4096) % 26);
  REQUIRE(t.rt->workspace_file(id, file_op(op::write, "big", piece)));
  for (int i = 1; i < 16; ++i) REQUIRE(t.rt->workspace_file(id, file_op(op::append, "big", piece)));

  auto inside = t.rt->exec(in_workspace(id, "stat -c '%s %a %u' /work/empty /work/bin/all /work/big;"
                                            " od -An -tx1 /work/bin/all | tr -d ' \\n' | md5sum | cut -c1-8;"
                                            " echo more >> /work/bin/all && echo appended"));
  REQUIRE(inside);
  INFO(inside->err.data);
  auto uid = std::to_string(kLandlockJailUser);
  std::string expect_stat = "0 644 " + uid + "\n256 600 " + uid + "\n" + std::to_string(64ull << 20) + " 644 " + uid + "\n";
  CHECK(inside->out.data.substr(0, expect_stat.size()) == expect_stat);
  CHECK(inside->out.data.find("appended") != std::string::npos);

  // Read back: the binary file whole, the big one in pieces that add up.
  auto all = file_op(op::read, "/work/bin/all");
  auto back = t.rt->workspace_file(id, all);
  REQUIRE(back);
  CHECK(back->chunk.data.substr(0, 256) == every_byte);
  std::uint64_t total = 0;
  bool same = true;
  for (std::uint64_t offset = 0;;) {
    auto read = file_op(op::read, "big");
    read.offset = offset;
    auto got = t.rt->workspace_file(id, read);
    REQUIRE(got);
    same = same && got->chunk.data == piece.substr(0, got->chunk.data.size());
    total += got->chunk.data.size();
    offset += got->chunk.data.size();
    if (got->chunk.eof || got->chunk.data.empty()) break;
  }
  CHECK(same);
  CHECK(total == (64ull << 20));

  auto listing = file_op(op::list, "/work");
  listing.depth = 2;
  auto listed = t.rt->workspace_file(id, listing);
  REQUIRE(listed);
  std::vector<std::string> paths;
  for (auto& e : listed->listing.entries) paths.push_back(e.path + ":" + e.type);
  CHECK(paths == std::vector<std::string>{"big:file", "bin:dir", "bin/all:file", "empty:file"});
}

TEST_CASE("links a program plants in a workspace lead the files API nowhere outside it",
          "[landlock][workspace][escape]") {
  REQUIRE_LANDLOCK();
  test_runtime t(workspace_profile(), false);
  temp_dir host("corral-ws-canary-");
  auto canary = host.path() + "/canary";
  { std::ofstream(canary) << "host secret\n"; }
  ::chmod(host.path().c_str(), 0755);
  auto w = t.rt->create_workspace({});
  REQUIRE(w);
  const auto& id = w->record.id;
  using op = file_call::op;
  auto planted = t.rt->exec(in_workspace(id, "ln -s / /work/r; ln -s " + canary + " /work/c; ln -s " + host.path() +
                                                 "/new /work/n; ln -s ../.. /work/up; echo planted"));
  REQUIRE(planted);
  REQUIRE(planted->out.data == "planted\n");  // the attempt ran

  for (const char* path : {"r/etc/passwd", "c", "up/record.json", "/work/../record.json", "/etc/passwd", "n"}) {
    INFO(path);
    auto read = t.rt->workspace_file(id, file_op(op::read, path));
    CHECK_FALSE(read);
  }
  // A write at a link's name replaces the link; nothing is written where it pointed.
  REQUIRE(t.rt->workspace_file(id, file_op(op::write, "c", "inside\n")));
  REQUIRE(t.rt->workspace_file(id, file_op(op::write, "n", "inside\n")));
  CHECK(read_text(canary) == "host secret\n");
  CHECK_FALSE(exists(host.path() + "/new"));
  auto through = t.rt->workspace_file(id, file_op(op::write, "r/tmp/corral-ws-escaped", "x"));
  CHECK_FALSE(through);
  CHECK_FALSE(exists("/tmp/corral-ws-escaped"));
  auto up = t.rt->workspace_file(id, file_op(op::write, "up/escaped", "x"));
  CHECK_FALSE(up);
  CHECK_FALSE(exists(t.rt->workspaces_dir() + "/escaped"));
  // Removing a link removes the link only.
  auto rm = file_op(op::remove, "r");
  rm.recursive = true;
  REQUIRE(t.rt->workspace_file(id, rm));
  CHECK(exists("/etc/passwd"));
}

TEST_CASE("the changes list matches what an execution did, since creation and since a mark",
          "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  one_workspace f;
  auto& t = f.t;
  const auto& id = f.id;
  REQUIRE(t.rt->exec(in_workspace(id, "echo one > /work/keep; echo two > /work/edit; echo three > /work/gone;"
                                      " echo four > /work/mode; mkdir /work/d"))->exit_code == 0);
  auto since_creation = t.rt->workspace_changes(id);
  REQUIRE(since_creation);
  CHECK(since_creation->changes.size() == 5);
  REQUIRE(t.rt->mark_workspace(id, "before-run"));

  REQUIRE(t.rt->exec(in_workspace(id, "echo changed > /work/edit; rm /work/gone; chmod 600 /work/mode;"
                                      " ln -s keep /work/d/link; printf new > /work/d/new"))->exit_code == 0);
  auto since_mark = t.rt->workspace_changes(id, "before-run");
  REQUIRE(since_mark);
  std::map<std::string, std::string> seen;
  for (auto& c : since_mark->changes) {
    seen[c.entry.path] = to_string(c.what);
  }
  CHECK(seen == std::map<std::string, std::string>{{"d/link", "added"},
                                                   {"d/new", "added"},
                                                   {"edit", "modified"},
                                                   {"gone", "removed"},
                                                   {"mode", "modified"}});
  // The hash is the content's, as sha256sum outside computes it.
  for (auto& c : since_mark->changes)
    if (c.entry.path == "d/new")
      CHECK(c.entry.sha256 == "11507a0e2f5e69d5dfa40a62a1bd7b6ee57e6bcd85c67c9b8431b36fff21c437");
  CHECK_FALSE(t.rt->workspace_changes(id, "no-such-mark"));
  CHECK_FALSE(t.rt->mark_workspace(id, "../x"));
}

TEST_CASE("an execution asked for its changes gets what it changed in its result, and only with a workspace",
          "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  one_workspace f;
  auto& t = f.t;
  const auto& id = f.id;
  REQUIRE(t.rt->exec(in_workspace(id, "echo one > /work/keep; echo two > /work/edit; echo three > /work/gone"))->exit_code == 0);

  auto r = in_workspace(id, "echo changed > /work/edit; rm /work/gone; printf new > /work/new");
  r.changes = true;
  auto ran = t.rt->exec(r);
  REQUIRE(ran);
  CHECK(ran->exit_code == 0);
  REQUIRE(ran->changes);
  CHECK(ran->changes->error.empty());
  CHECK_FALSE(ran->changes->truncated);
  std::map<std::string, std::string> seen;
  for (auto& c : ran->changes->entries) {
    seen[c.entry.path] = to_string(c.what);
    if (c.entry.path == "new") CHECK(c.entry.sha256 == "11507a0e2f5e69d5dfa40a62a1bd7b6ee57e6bcd85c67c9b8431b36fff21c437");
  }
  // What an earlier execution wrote (keep) is not this one's change.
  CHECK(seen == std::map<std::string, std::string>{{"edit", "modified"}, {"gone", "removed"}, {"new", "added"}});

  // Not asked: no list, and no scan.
  auto plain = t.rt->exec(in_workspace(id, "echo more >> /work/keep"));
  REQUIRE(plain);
  CHECK_FALSE(plain->changes);
  // Without a workspace there is nothing to compare: refused, saying why.
  auto lone = shell("true");
  lone.changes = true;
  auto refused = t.rt->exec(lone);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("needs a workspace") != std::string::npos);
}

TEST_CASE("an execution's change scans remember digests beside the files, out of the program's reach",
          "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  one_workspace f;
  auto& t = f.t;
  REQUIRE(t.rt->exec(in_workspace(f.id, "head -c 1000000 /dev/urandom > /work/big"))->exit_code == 0);
  // Older than the cache's racy margin: the next scan may remember its digest.
  std::this_thread::sleep_for(hash_cache::kDefaultRacyMargin + 300ms);
  auto r = in_workspace(f.id, "ls -a / /work; cat /work/../hashcache /hashcache 2>/dev/null; true");
  r.changes = true;
  auto ran = t.rt->exec(r);
  REQUIRE(ran);
  REQUIRE(ran->changes);
  CHECK(ran->changes->entries.empty());
  // From outside: the cache beside the root names big's inode and its sha256sum.
  struct stat st {};
  REQUIRE(::stat((files_of(t, f.id) + "/big").c_str(), &st) == 0);
  auto cache = read_text(t.rt->workspaces_dir() + "/" + f.id + "/hashcache");
  auto digest = shell_output("sha256sum '" + files_of(t, f.id) + "/big' | cut -c1-64");
  REQUIRE(digest.size() == 65);
  CHECK(cache.find(" " + std::to_string(st.st_ino) + " 1000000 ") != std::string::npos);
  CHECK(cache.find(digest.substr(0, 64)) != std::string::npos);
  // From inside: the listing ran (it names big), and neither / nor /work shows the cache.
  CHECK(ran->out.data.find("big") != std::string::npos);
  CHECK(ran->out.data.find("hashcache") == std::string::npos);
  CHECK(ran->out.data.find("corral-hashcache") == std::string::npos);
}

TEST_CASE("an execution starts where its cwd says, inside the boundary only", "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  one_workspace f;
  auto& t = f.t;
  const auto& id = f.id;
  REQUIRE(t.rt->exec(in_workspace(id, "mkdir -p /work/src/app && echo here > /work/src/app/f"))->exit_code == 0);

  // Relative to the workspace's /work, or absolute in the jail's view; the holder's steps too.
  auto r = in_workspace(id, "pwd; cat f");
  r.cwd = "src/app";
  auto relative = t.rt->exec(r);
  REQUIRE(relative);
  CHECK(relative->out.data == "/work/src/app\nhere\n");
  r = in_workspace(id, "pwd");
  r.cwd = "/tmp";
  CHECK(t.rt->exec(r)->out.data == "/tmp\n");

  // Outside a workspace too.
  auto alone = shell("pwd");
  alone.cwd = "/usr/bin";
  CHECK(t.rt->exec(alone)->out.data == "/usr/bin\n");

  // A directory the boundary does not show cannot be entered: the attempt is made and fails,
  // and the program never runs.
  for (const char* hidden : {"/root", "/work/missing", "../../root"}) {
    auto probe = in_workspace(id, "echo ran-anyway");
    probe.cwd = hidden;
    auto refused = t.rt->exec(probe);
    INFO(hidden);
    REQUIRE(!refused);
    CHECK_THAT(refused.error().message, Catch::Contains("cannot enter"));
  }
  auto nul = shell("pwd");
  nul.cwd = std::string("/tmp\0x", 6);
  CHECK(!t.rt->exec(nul));
}

TEST_CASE("a workspace home shows its files at a second place inside, writable, and a bad home is refused",
          "[landlock][workspace]") {
  REQUIRE_LANDLOCK();
  test_runtime t(workspace_profile(), false);
  workspace_options o;
  o.home = "/home/user";
  auto w = t.rt->create_workspace(o);
  REQUIRE(w);
  CHECK(w->record.home == "/home/user");
  auto r = in_workspace(w->record.id, "echo via-home > /home/user/h.txt && cat /work/h.txt && pwd");
  r.cwd = "/home/user";
  auto wrote = t.rt->exec(r);
  REQUIRE(wrote);
  CHECK(wrote->exit_code == 0);
  CHECK(wrote->out.data == "via-home\n/home/user\n");
  // From outside: the one directory holds it.
  CHECK(read_text(files_of(t, w->record.id) + "/h.txt") == "via-home\n");
  // The rest of /home stays what the view shows of it: nothing of the host's.
  auto host_home = t.rt->exec(in_workspace(w->record.id, "ls -A /home"));
  REQUIRE(host_home);
  CHECK(host_home->out.data == "user\n");
  // A second workspace without a home has none.
  auto plain = t.rt->create_workspace({});
  REQUIRE(plain);
  auto none = t.rt->exec(in_workspace(plain->record.id, "test -e /home/user && echo there || echo absent"));
  REQUIRE(none);
  CHECK(none->out.data == "absent\n");

  for (const char* bad : {"relative", "/work", "/usr/home", "/proc/x", "/"}) {
    workspace_options b;
    b.home = bad;
    auto refused = t.rt->create_workspace(b);
    INFO(bad);
    REQUIRE(!refused);
    CHECK_THAT(refused.error().message, Catch::Contains("workspace home"));
  }
}
