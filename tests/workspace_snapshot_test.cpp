// Workspace snapshots (actors/workspaces/workspace_snapshots.hpp): a restore gives the same
// files, modes, symlinks and times, as `find` and `sha256sum` see them from the host; a
// damaged archive, an archive that climbs out of its root or leads through a symlink, and
// another principal get nothing; a snapshot waits for a quiet workspace.
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <future>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "config/sha256.hpp"
#include "landlock_fixture.hpp"
#include "runtime_fixture.hpp"
#include "workspace_fixture.hpp"
#include "tiers/workspace/snapshot_record.hpp"
#include "tiers/workspace/tar_format.hpp"
#include "tiers/workspace/zstd_stream.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

std::string snapshot_dir(const test_runtime& t, const std::string& id) {
  return t.rt->workspaces_dir() + "/snapshots/" + id;
}

// The tree as GNU find and sha256sum see it from the host: path, type, mode, size (files
// and links), link target and mtime to the nanosecond, then every file's digest. FIFOs
// are left out (a snapshot does not keep them).
std::string outside_view(const std::string& root) {
  return shell_output("cd '" + root + "' && find . -mindepth 1 ! -type p \\( -type d -printf '%P d %m %T@\\n' \\) -o "
                        "\\( ! -type p -printf '%P %y %m %s %l %T@\\n' \\) | LC_ALL=C sort && "
                        "find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum");
}

std::string sha256_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  return sha256_hex(bytes);
}

// A snapshot of principal "lib" holding `archive` (tar entries, compressed here), with a
// record whose digest matches: what the restore then refuses, it refuses for its content.
std::string plant_snapshot(const test_runtime& t, const std::string& tar_bytes) {
  auto id = new_snapshot_id();
  auto dir = snapshot_dir(t, id);
  std::filesystem::create_directories(dir);
  int fd = ::open((dir + "/archive.tar.zst").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  zstd_writer out(fd);
  REQUIRE(out.write(tar_bytes));
  auto done = out.finish();
  ::close(fd);
  REQUIRE(done);
  snapshot_record r;
  r.id = id;
  r.owner = "lib";
  r.source = "w-000000000000";
  r.created_at = 1;
  r.digest = "sha256:" + done->sha256;
  r.bytes = done->bytes;
  REQUIRE(write_snapshot_record(dir, r));
  return id;
}

tar_entry entry(tar_entry::kind k, std::string path, std::string target = "") {
  tar_entry e;
  e.type = k;
  e.path = std::move(path);
  e.link_target = std::move(target);
  e.mode = 0755;
  return e;
}

} // namespace

TEST_CASE("a workspace restored from its snapshot holds the same files, modes, symlinks and times as find sees them",
          "[landlock][workspace][snapshot]") {
  REQUIRE_LANDLOCK();
  test_runtime t(workspace_profile(), false);
  workspace_options o;
  o.name = "original";
  auto w = t.rt->create_workspace(o);
  REQUIRE(w);
  std::string long_name(200, 'n');
  auto made = t.rt->exec(in_workspace(
      "original", "set -e; cd /work; printf 'text\\n' > a.txt; : > empty; head -c 300000 /dev/urandom > bin.dat; "
                  "chmod 0600 a.txt; printf '#!/bin/sh\\n' > run.sh; chmod 0755 run.sh; mkdir -p d/e/f; "
                  "echo deep > d/e/f/x; echo locked > d/ro.txt; chmod 0555 d/e; chmod 1777 d; "
                  "ln -s a.txt rel; ln -s /etc/passwd abs; ln -s missing dangling; mkfifo pipe; "
                  "echo long > " + long_name + "; touch -d '2001-02-03 04:05:06.123456789' a.txt"));
  REQUIRE(made);
  INFO(made->err.data);
  REQUIRE(made->exit_code == 0);
  auto before = outside_view(files_of(t, w->record.id));
  REQUIRE(before.find("a.txt f 600 5  981173106.123456789") != std::string::npos);

  auto snap = t.rt->snapshot_workspace("original");
  REQUIRE(snap);
  CHECK(valid_snapshot_id(snap->id));
  CHECK(snap->source == w->record.id);
  CHECK(snap->source_name == "original");
  CHECK(snap->skipped == std::vector<std::string>{"pipe"});
  // The digest the record carries is the archive's, as a hash taken here computes it.
  CHECK(snap->digest == "sha256:" + sha256_of_file(snapshot_dir(t, snap->id) + "/archive.tar.zst"));
  CHECK(snap->content_bytes >= 300000);
  CHECK(snap->bytes < snap->content_bytes + 64 * 1024);
  // Another reader (GNU tar with zstd, installed by scripts/setup) reads the same archive:
  // the digest covers a standard format, not a private one.
  auto listed = shell_output("tar --zstd -tvf '" + snapshot_dir(t, snap->id) + "/archive.tar.zst' 2>&1");
  INFO(listed);
  CHECK(listed.find("rw------- 0/0               5 2001-02-03 04:05 a.txt") != std::string::npos);
  CHECK(listed.find("rel -> a.txt") != std::string::npos);
  CHECK(listed.find(long_name) != std::string::npos);
  CHECK(listed.find("pipe") == std::string::npos);

  REQUIRE(t.rt->end_workspace("original"));
  CHECK_FALSE(exists(files_of(t, w->record.id)));

  workspace_options again;
  again.name = "restored";
  again.from_snapshot = snap->id;
  auto r = t.rt->create_workspace(again);
  if (!r) FAIL(r.error().describe());
  CHECK(r->record.from_snapshot == snap->id);
  CHECK(outside_view(files_of(t, r->record.id)) == before);
  // Usable as any workspace: its files are the jail user's to change, and its changes
  // start from what it was restored to.
  auto used = t.rt->exec(in_workspace("restored", "cat /work/d/e/f/x && echo more >> /work/a.txt && cat /work/rel"));
  REQUIRE(used);
  INFO(used->err.data);
  CHECK(used->out.data == "deep\ntext\nmore\n");
  auto changes = t.rt->workspace_changes("restored");
  REQUIRE(changes);
  REQUIRE(changes->changes.size() == 1);
  CHECK(changes->changes[0].entry.path == "a.txt");

  REQUIRE(t.rt->list_snapshots().size() == 1);
  REQUIRE(t.rt->remove_snapshot(snap->id));
  CHECK(t.rt->list_snapshots().empty());
  CHECK_FALSE(exists(snapshot_dir(t, snap->id)));
  REQUIRE(t.rt->end_workspace("restored"));
}

TEST_CASE("a damaged snapshot is refused before anything is unpacked, and leaves no workspace behind",
          "[landlock][workspace][snapshot]") {
  REQUIRE_LANDLOCK();
  test_runtime t(workspace_profile(), false);
  auto w = t.rt->create_workspace({});
  REQUIRE(w);
  REQUIRE(t.rt->exec(in_workspace(w->record.id, "echo precious > /work/f"))->exit_code == 0);
  auto snap = t.rt->snapshot_workspace(w->record.id);
  REQUIRE(snap);
  REQUIRE(t.rt->end_workspace(w->record.id));

  // One byte of the archive flipped, from outside.
  auto archive = snapshot_dir(t, snap->id) + "/archive.tar.zst";
  std::fstream f(archive, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(snap->bytes / 2));
  char c = 0;
  f.read(&c, 1);
  c ^= 0x40;
  f.seekp(static_cast<std::streamoff>(snap->bytes / 2));
  f.write(&c, 1);
  f.close();

  workspace_options o;
  o.name = "from-damaged";
  o.from_snapshot = snap->id;
  auto r = t.rt->create_workspace(o);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("is damaged") != std::string::npos);
  CHECK(t.rt->list_workspaces().empty());
  // Only the snapshots directory is left where workspaces live.
  CHECK(entries(t.rt->workspaces_dir()) == std::vector<std::string>{"snapshots"});
  // The name is free again.
  o.from_snapshot.clear();
  CHECK(t.rt->create_workspace(o));
}

TEST_CASE("an archive that climbs out of its root or writes through a symlink restores nothing outside it",
          "[landlock][workspace][snapshot]") {
  REQUIRE_LANDLOCK();
  test_runtime t(workspace_profile(), false);
  temp_dir outside("corral-snap-outside-");

  // 1. A path with "..": refused by name; nothing lands beside the workspace.
  auto climbing = tar_header(entry(tar_entry::kind::file, "../../escaped")) + tar_end();
  auto id1 = plant_snapshot(t, climbing);
  workspace_options o;
  o.from_snapshot = id1;
  auto r1 = t.rt->create_workspace(o);
  REQUIRE_FALSE(r1);
  CHECK(r1.error().message.find("'..'") != std::string::npos);
  CHECK_FALSE(exists(t.rt->workspaces_dir() + "/escaped"));
  CHECK_FALSE(exists(t.rt->workspaces_dir() + "/../escaped"));

  // 2. A symlink to a host directory, then a file "through" it: the restore ran (it names
  // the entry it refused) and the host directory is still empty.
  auto through = tar_header(entry(tar_entry::kind::symlink, "link", outside.path())) +
                 tar_header(entry(tar_entry::kind::file, "link/pwned")) + tar_end();
  o.from_snapshot = plant_snapshot(t, through);
  auto r2 = t.rt->create_workspace(o);
  REQUIRE_FALSE(r2);
  CHECK(r2.error().message.find("restoring 'link/pwned'") != std::string::npos);
  CHECK(entries(outside.path()).empty());

  // 3. The same name twice: the second cannot replace the first (no O_EXCL bypass).
  auto twice = tar_header(entry(tar_entry::kind::symlink, "x", outside.path() + "/victim")) +
               tar_header(entry(tar_entry::kind::file, "x")) + tar_end();
  o.from_snapshot = plant_snapshot(t, twice);
  auto r3 = t.rt->create_workspace(o);
  REQUIRE_FALSE(r3);
  CHECK(r3.error().message.find("restoring 'x'") != std::string::npos);
  CHECK_FALSE(exists(outside.path() + "/victim"));

  CHECK(t.rt->list_workspaces().empty());
}

TEST_CASE("a snapshot waits for a quiet workspace, and another principal cannot see, take or restore one",
          "[landlock][workspace][snapshot]") {
  REQUIRE_LANDLOCK();
  test_runtime t(workspace_profile(), false);
  auto w = t.rt->create_workspace({});
  REQUIRE(w);
  auto id = w->record.id;

  std::promise<expected<exec_result>> finished;
  auto result = finished.get_future();
  t.rt->exec_async(in_workspace(id, "touch /work/started; sleep 3"),
                   [&](expected<exec_result> r) { finished.set_value(std::move(r)); });
  REQUIRE(eventually([&] { return exists(files_of(t, id) + "/started"); }, 10s));
  auto busy = t.rt->snapshot_workspace(id);
  REQUIRE_FALSE(busy);
  CHECK(busy.error().kind == failure_kind::conflict);
  CHECK(busy.error().message.find("running") != std::string::npos);
  REQUIRE(result.wait_for(20s) == std::future_status::ready);
  REQUIRE(result.get());

  auto snap = t.rt->snapshot_workspace(id);
  REQUIRE(snap);
  // Another principal: the same words as for a snapshot that does not exist.
  auto absent = t.rt->inspect_snapshot("s-000000000000", "uid:4242");
  auto theirs = t.rt->inspect_snapshot(snap->id, "uid:4242");
  REQUIRE_FALSE(theirs);
  REQUIRE_FALSE(absent);
  CHECK(theirs.error().kind == failure_kind::not_found);
  CHECK(theirs.error().message == "no snapshot '" + snap->id + "' here");
  CHECK(t.rt->list_snapshots("uid:4242").empty());
  CHECK_FALSE(t.rt->remove_snapshot(snap->id, "uid:4242"));
  CHECK_FALSE(t.rt->snapshot_workspace(id, "uid:4242"));
  workspace_options o;
  o.from_snapshot = snap->id;
  auto stolen = t.rt->create_workspace(o, "uid:4242");
  REQUIRE_FALSE(stolen);
  CHECK(stolen.error().kind == failure_kind::not_found);
  CHECK(t.rt->list_workspaces("uid:4242").empty());
  // Still there for its owner.
  CHECK(t.rt->inspect_snapshot(snap->id));
  REQUIRE(t.rt->remove_snapshot(snap->id));
  REQUIRE(t.rt->end_workspace(id));
}
