// tiers/workspace: a workspace root handled from the host while the tree holds what a
// hostile program could plant in it (symlinks out, FIFOs, a link to /dev/zero, a directory
// swapped for a link mid-walk). Every case checks both halves: the attempt ran, and it
// failed or stayed inside, with nothing appearing outside.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <optional>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "config/sha256.hpp"
#include "runtime_fixture.hpp"
#include "tiers/workspace/change_manifest.hpp"
#include "tiers/workspace/hash_cache.hpp"
#include "tiers/workspace/workspace_path.hpp"
#include "tiers/workspace/workspace_tree.hpp"

using namespace corral;
using corral::testing::temp_dir;

namespace {

// sha256sum's opinion of a host file: a second implementation to check ours against.
std::string sha256sum_of(const std::string& path) {
  std::string command = "sha256sum '" + path + "'";
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p);
  char out[65] = {};
  std::size_t n = std::fread(out, 1, 64, p);
  ::pclose(p);
  return std::string(out, n);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void put(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  REQUIRE(out.good());
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// A workspace root and, beside it, the host files it must never reach.
struct tree_fixture {
  temp_dir dir{"corral-workspace-"};
  std::string root = dir / "root";
  std::string outside = dir / "host";
  std::string canary = dir / "host/canary";
  const std::string canary_bytes = "HOST-CANARY-7f3a";
  std::optional<workspace_tree> tree;

  tree_fixture() {
    REQUIRE(::mkdir(root.c_str(), 0755) == 0);
    REQUIRE(::mkdir(outside.c_str(), 0755) == 0);
    put(canary, canary_bytes);
    auto opened = workspace_tree::open(root);
    if (!opened) FAIL(opened.error().describe());
    tree.emplace(std::move(*opened));
  }
  std::string in_root(const std::string& rel) const { return root + "/" + rel; }
  void link(const std::string& target, const std::string& rel) const {
    REQUIRE(::symlink(target.c_str(), in_root(rel).c_str()) == 0);
  }
  // The host side untouched: the canary as it was, nothing new beside it.
  void check_outside_untouched() const {
    CHECK(slurp(canary) == canary_bytes);
    std::size_t count = 0;
    for (auto& e : std::filesystem::directory_iterator(outside)) {
      (void)e;
      ++count;
    }
    CHECK(count == 1);
  }
};

std::string pattern(std::size_t size, std::uint32_t seed) {
  std::string data(size, '\0');
  std::uint32_t x = seed;
  for (auto& c : data) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return data;
}

} // namespace

TEST_CASE("workspace files round-trip 0 bytes, 64 MiB and every byte value, sha256 checked", "[workspace_tree]") {
  tree_fixture f;
  std::string all_bytes;
  for (int c = 0; c < 256; ++c) all_bytes += static_cast<char>(c);
  const std::string big = pattern(64u << 20, 42);
  struct sample {
    std::string rel;
    const std::string* data;
  };
  std::string empty;
  for (auto& s : {sample{"empty", &empty}, sample{"bytes/all-256", &all_bytes}, sample{"big/blob", &big}}) {
    INFO(s.rel);
    auto written = f.tree->write(s.rel, *s.data, 0640, true);
    if (!written) FAIL(written.error().describe());
    CHECK(sha256sum_of(f.in_root(s.rel)) == sha256_hex(*s.data));
    auto back = f.tree->read(s.rel, 0, 128u << 20);
    REQUIRE(back);
    CHECK(back->eof);
    CHECK(back->size == s.data->size());
    CHECK(sha256_hex(back->data) == sha256_hex(*s.data));
    auto entry = f.tree->stat(s.rel);
    REQUIRE(entry);
    CHECK(entry->type == "file");
    CHECK(entry->mode == 0640);
    CHECK(entry->size == s.data->size());
  }
  // The big one again in 1 MiB chunks: offsets and eof line up.
  std::string joined;
  for (std::uint64_t offset = 0;;) {
    auto chunk = f.tree->read("big/blob", offset, 1u << 20);
    REQUIRE(chunk);
    joined += chunk->data;
    offset += chunk->data.size();
    if (chunk->eof) break;
    REQUIRE(chunk->data.size() == 1u << 20);
  }
  CHECK(joined.size() == big.size());
  CHECK(joined == big);
  auto past_end = f.tree->read("big/blob", big.size() + 10, 100);
  REQUIRE(past_end);
  CHECK(past_end->data.empty());
  CHECK(past_end->eof);

  auto manifest = scan_tree(*f.tree, 100);
  REQUIRE(manifest);
  std::vector<std::string> paths;
  for (auto& e : *manifest) paths.push_back(e.path);
  CHECK(paths == std::vector<std::string>{"big", "big/blob", "bytes", "bytes/all-256", "empty"});
  CHECK((*manifest)[1].sha256 == sha256sum_of(f.in_root("big/blob")));
  CHECK((*manifest)[3].sha256 == sha256_hex(all_bytes));
  CHECK((*manifest)[4].sha256 == sha256_hex(""));
  // The temp files of the atomic writes are gone.
  auto all = f.tree->list(".", max_list_depth, 1000);
  REQUIRE(all);
  CHECK(all->entries.size() == 5);
}

TEST_CASE("workspace writes replace atomically, mask the mode and never write through a symlink", "[workspace_tree]") {
  tree_fixture f;
  REQUIRE(f.tree->write("a.txt", "first", 0644, false));
  REQUIRE(f.tree->write("a.txt", "second", 04777, false));
  CHECK(slurp(f.in_root("a.txt")) == "second");
  struct stat st {};
  REQUIRE(::lstat(f.in_root("a.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0777);  // setuid dropped, umask undone

  // A planted link to the canary: the write replaces the link, the canary keeps its bytes.
  f.link(f.canary, "to-canary");
  REQUIRE(f.tree->write("to-canary", "mine", 0644, false));
  REQUIRE(::lstat(f.in_root("to-canary").c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK(slurp(f.in_root("to-canary")) == "mine");
  // A dangling link to a host path that does not exist yet: nothing is created there.
  std::string ghost = f.outside + "/ghost";
  f.link(ghost, "dangling");
  auto appended = f.tree->append("dangling", "x");
  CHECK_FALSE(appended);
  CHECK(appended.error().kind == failure_kind::refused);
  CHECK_FALSE(exists(ghost));
  REQUIRE(f.tree->write("dangling", "mine", 0644, false));
  CHECK_FALSE(exists(ghost));
  CHECK(slurp(f.in_root("dangling")) == "mine");

  // Append in place, to a file that exists and to one that does not.
  REQUIRE(f.tree->append("a.txt", "+more"));
  REQUIRE(f.tree->append("new.log", "line\n"));
  CHECK(slurp(f.in_root("a.txt")) == "second+more");
  CHECK(slurp(f.in_root("new.log")) == "line\n");

  // Writing over a directory or into a missing one fails and leaves no temp file.
  REQUIRE(::mkdir(f.in_root("d").c_str(), 0755) == 0);
  CHECK_FALSE(f.tree->write("d", "x", 0644, false));
  CHECK_FALSE(f.tree->write("missing/x", "x", 0644, false));
  CHECK_FALSE(exists(f.in_root("missing")));
  auto listing = f.tree->list(".", 2, 100);
  REQUIRE(listing);
  for (auto& e : listing->entries) CHECK(e.name.rfind(".corral-write-", 0) == std::string::npos);
  f.check_outside_untouched();
}

TEST_CASE("workspace paths through planted symlinks out of the root are refused", "[workspace_tree]") {
  tree_fixture f;
  f.link(f.outside, "x");                  // ln -s <host dir> x
  f.link("/", "r");                        // ln -s / r
  f.link("../host", "up");                 // a relative link that climbs out
  f.link("/dev/zero", "zero");
  REQUIRE(::mkdir(f.in_root("inner").c_str(), 0755) == 0);
  REQUIRE(f.tree->write("inner/file", "inside", 0644, false));
  f.link("inner", "ok-link");              // a link that stays inside: allowed

  // Reads may aim at real host files; every mutation aims at the test's own host dir, so
  // a regression here writes into a temp dir, never into /etc.
  auto read = f.tree->read("r/etc/passwd", 0, 1 << 20);
  REQUIRE_FALSE(read);
  CHECK(read.error().kind == failure_kind::refused);
  CHECK(read.error().message.find("r/etc/passwd") != std::string::npos);
  for (std::string host_dir : std::vector<std::string>{"x", "up", "r" + f.outside}) {
    INFO(host_dir);
    std::string rel = host_dir + "/canary";
    auto through = f.tree->read(rel, 0, 1 << 20);
    REQUIRE_FALSE(through);
    CHECK(through.error().kind == failure_kind::refused);
    CHECK(through.error().message.find(rel) != std::string::npos);
    CHECK_FALSE(f.tree->write(rel, "evil", 0644, false));
    CHECK_FALSE(f.tree->write(host_dir + "/new", "evil", 0644, false));
    CHECK_FALSE(f.tree->write(host_dir + "/newdir/new", "evil", 0644, true));
    CHECK_FALSE(f.tree->append(rel, "evil"));
    CHECK_FALSE(f.tree->make_dir(host_dir + "/d", 0755, true));
    CHECK_FALSE(f.tree->make_dir(host_dir + "/d", 0755, false));
    CHECK_FALSE(f.tree->remove(rel, true));
    CHECK_FALSE(f.tree->move(rel, "stolen"));
    CHECK_FALSE(f.tree->move("inner/file", host_dir + "/moved"));
    CHECK_FALSE(f.tree->stat(rel));
    CHECK_FALSE(f.tree->list(host_dir, 1, 10));
  }
  auto zero = f.tree->read("zero", 0, 16);
  REQUIRE_FALSE(zero);
  CHECK(zero.error().kind == failure_kind::refused);
  CHECK(exists(f.in_root("inner/file")));
  CHECK_FALSE(exists(f.in_root("stolen")));

  // The links themselves are reported as links, with their text, and not entered.
  auto x = f.tree->stat("x");
  REQUIRE(x);
  CHECK(x->type == "symlink");
  CHECK(x->symlink_target == f.outside);
  auto listing = f.tree->list(".", max_list_depth, 100);
  REQUIRE(listing);
  for (auto& e : listing->entries) CHECK((e.path.find('/') == std::string::npos || e.path.rfind("inner/", 0) == 0));
  auto through_link = f.tree->read("ok-link/file", 0, 100);
  REQUIRE(through_link);
  CHECK(through_link->data == "inside");

  // Removing a link removes the link, recursive or not; the host dir stays.
  REQUIRE(f.tree->remove("x", true));
  REQUIRE(f.tree->remove("r", false));
  CHECK_FALSE(exists(f.in_root("x")));
  CHECK(exists("/etc/passwd"));
  f.check_outside_untouched();
}

TEST_CASE("workspace tree calls with dot-dot or absolute paths do not leave the root", "[workspace_tree]") {
  tree_fixture f;
  // The lexical layer refuses them first...
  CHECK(workspace_relative_path("/work/../host/canary", "/work").error().kind == failure_kind::refused);
  CHECK(workspace_relative_path(f.canary, "/work").error().kind == failure_kind::refused);
  // ...and the tree, handed them anyway, resolves nothing outside.
  for (std::string rel : std::vector<std::string>{"../host/canary", f.canary, "./../host/canary", "a/../../host/canary"}) {
    INFO(rel);
    CHECK_FALSE(f.tree->read(rel, 0, 100));
    CHECK_FALSE(f.tree->write(rel, "evil", 0644, true));
    CHECK_FALSE(f.tree->stat(rel));
  }
  // A bare `..` as the last name would reach the root's parent through fstatat/renameat.
  auto parent = f.tree->stat("..");
  REQUIRE_FALSE(parent);
  CHECK(parent.error().kind == failure_kind::refused);
  CHECK_FALSE(f.tree->move("..", "x"));
  CHECK_FALSE(f.tree->move("a", ".."));
  CHECK_FALSE(f.tree->remove("..", true));
  CHECK_FALSE(f.tree->make_dir("a/..", 0755, false));
  CHECK_FALSE(f.tree->stat("a//b"));
  CHECK_FALSE(f.tree->write("../host/new", "evil", 0644, false));
  CHECK_FALSE(f.tree->make_dir("../host/newdir", 0755, true));
  f.check_outside_untouched();
  // The root itself cannot be removed, moved or overwritten.
  CHECK_FALSE(f.tree->remove(".", true));
  CHECK_FALSE(f.tree->move(".", "elsewhere"));
  CHECK_FALSE(f.tree->write(".", "x", 0644, false));
  CHECK(exists(f.root));
}

TEST_CASE("a workspace FIFO read, append or scan fails fast instead of waiting", "[workspace_tree]") {
  tree_fixture f;
  REQUIRE(::mkfifo(f.in_root("pipe").c_str(), 0644) == 0);
  f.link("/dev/zero", "zero");
  f.link("pipe", "to-pipe");
  auto started = std::chrono::steady_clock::now();
  auto read = f.tree->read("pipe", 0, 100);
  REQUIRE_FALSE(read);
  CHECK(read.error().message.find("fifo") != std::string::npos);
  auto via_link = f.tree->read("to-pipe", 0, 100);
  REQUIRE_FALSE(via_link);
  CHECK(via_link.error().message.find("fifo") != std::string::npos);
  CHECK_FALSE(f.tree->append("pipe", "x"));
  REQUIRE(f.tree->write("file", "data", 0644, false));
  auto manifest = scan_tree(*f.tree, 100);
  REQUIRE(manifest);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
  REQUIRE(manifest->size() == 4);
  CHECK((*manifest)[1].path == "pipe");
  CHECK((*manifest)[1].type == 'o');
  CHECK((*manifest)[1].sha256.empty());
  CHECK((*manifest)[3].path == "zero");
  CHECK((*manifest)[3].type == 'l');
  CHECK((*manifest)[3].link_target == "/dev/zero");
  auto pipe = f.tree->stat("pipe");
  REQUIRE(pipe);
  CHECK(pipe->type == "fifo");
}

TEST_CASE("workspace directories are made, listed, moved and removed without following links", "[workspace_tree]") {
  tree_fixture f;
  REQUIRE(f.tree->make_dir("a/b/c", 0750, true));
  CHECK(f.tree->make_dir("a/b/c", 0750, true));  // mkdir -p: already there is fine
  auto again = f.tree->make_dir("a/b/c", 0750, false);
  REQUIRE_FALSE(again);
  CHECK(again.error().kind == failure_kind::invalid_request);
  CHECK_FALSE(f.tree->make_dir("p/q", 0750, false));
  REQUIRE(f.tree->write("a/b/c/f1", "1", 0644, false));
  REQUIRE(f.tree->write("a/f0", "0", 0644, false));
  f.link(f.outside, "a/b/out");  // a link to a host dir inside the tree to be removed

  auto depth1 = f.tree->list("a", 1, 100);
  REQUIRE(depth1);
  REQUIRE(depth1->entries.size() == 2);
  CHECK(depth1->entries[0].path == "a/b");
  CHECK(depth1->entries[0].type == "dir");
  CHECK(depth1->entries[0].mode == 0750);
  CHECK(depth1->entries[1].path == "a/f0");
  auto deep = f.tree->list(".", max_list_depth, 100);
  REQUIRE(deep);
  std::vector<std::string> paths;
  for (auto& e : deep->entries) paths.push_back(e.path);
  CHECK(paths == std::vector<std::string>{"a", "a/b", "a/b/c", "a/b/c/f1", "a/b/out", "a/f0"});
  CHECK_FALSE(deep->truncated);
  auto cut = f.tree->list(".", max_list_depth, 3);
  REQUIRE(cut);
  CHECK(cut->entries.size() == 3);
  CHECK(cut->truncated);
  CHECK_FALSE(f.tree->list(".", 0, 10));
  CHECK_FALSE(f.tree->list(".", max_list_depth + 1, 10));
  CHECK_FALSE(f.tree->list("a/f0", 1, 10));

  REQUIRE(f.tree->move("a/f0", "a/b/f0-moved"));
  CHECK(slurp(f.in_root("a/b/f0-moved")) == "0");
  CHECK_FALSE(f.tree->move("nothing", "x"));

  auto not_empty = f.tree->remove("a", false);
  REQUIRE_FALSE(not_empty);
  CHECK(not_empty.error().kind == failure_kind::invalid_request);
  REQUIRE(f.tree->remove("a", true));
  CHECK_FALSE(exists(f.in_root("a")));
  f.check_outside_untouched();
  CHECK_FALSE(f.tree->remove("a", true));
}

TEST_CASE("a workspace tree nested past the remove bound is refused, naming it", "[workspace_tree]") {
  tree_fixture f;
  // Deeper than max_remove_depth, built fd by fd (the path is too long for one call).
  int dir = ::open(f.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(dir >= 0);
  for (unsigned i = 0; i <= max_remove_depth; ++i) {
    REQUIRE(::mkdirat(dir, "n", 0755) == 0);
    int next = ::openat(dir, "n", O_PATH | O_DIRECTORY | O_CLOEXEC);
    ::close(dir);
    REQUIRE(next >= 0);
    dir = next;
  }
  ::close(dir);
  auto removed = f.tree->remove("n", true);
  REQUIRE_FALSE(removed);
  CHECK(removed.error().message.find("max_remove_depth") != std::string::npos);
  auto scanned = scan_tree(*f.tree, 100000);
  REQUIRE_FALSE(scanned);
  CHECK(scanned.error().message.find("max_scan_depth") != std::string::npos);
  // temp_dir's remove_all cleans it up afterwards.
}

TEST_CASE("a workspace manifest diff sees what changed and refuses past its entry bound", "[workspace_tree]") {
  tree_fixture f;
  REQUIRE(f.tree->write("keep", "same", 0644, false));
  REQUIRE(f.tree->write("edit", "old", 0644, false));
  REQUIRE(f.tree->write("gone", "x", 0644, false));
  REQUIRE(f.tree->write("chmod", "x", 0644, false));
  f.link("keep", "link");
  auto before = scan_tree(*f.tree, 100);
  REQUIRE(before);
  auto text = serialize_manifest(*before);
  auto parsed = parse_manifest(text);
  REQUIRE(parsed);
  CHECK(*parsed == *before);

  REQUIRE(f.tree->write("edit", "new", 0644, false));
  REQUIRE(f.tree->remove("gone", false));
  REQUIRE(::chmod(f.in_root("chmod").c_str(), 0600) == 0);
  REQUIRE(f.tree->write("added/file", "a", 0644, true));
  REQUIRE(::unlink(f.in_root("link").c_str()) == 0);
  f.link("edit", "link");
  // Touched only: not a change.
  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
  REQUIRE(::utimensat(AT_FDCWD, f.in_root("keep").c_str(), times, 0) == 0);

  auto after = scan_tree(*f.tree, 100);
  REQUIRE(after);
  bool truncated = true;
  auto changes = diff_manifests(*parsed, *after, 100, truncated);
  CHECK_FALSE(truncated);
  std::vector<std::string> seen;
  for (auto& c : changes)
    seen.push_back(std::string(c.what == tree_change::kind::added ? "+" : c.what == tree_change::kind::removed ? "-" : "~") +
                   c.entry.path);
  CHECK(seen == std::vector<std::string>{"+added", "+added/file", "~chmod", "~edit", "-gone", "~link"});

  auto bounded = scan_tree(*f.tree, 3);
  REQUIRE_FALSE(bounded);
  CHECK(bounded.error().kind == failure_kind::limit_exceeded);
  CHECK(bounded.error().message.find("more than 3 entries") != std::string::npos);
  CHECK(scan_tree(*f.tree, after->size()));
}

TEST_CASE("a hash cache reads no unchanged file again and never serves a stale digest, even with mtime put back",
          "[workspace_tree]") {
  using namespace std::chrono_literals;
  tree_fixture f;
  temp_dir side("corral-hashcache-");
  auto cache_path = side.path() + "/hashcache";
  for (int i = 0; i < 20; ++i) REQUIRE(f.tree->write("f" + std::to_string(i), "content " + std::to_string(i), 0644, false));
  auto digest_of = [](const std::vector<manifest_entry>& m, const std::string& path) {
    for (auto& e : m)
      if (e.path == path) return e.sha256;
    return std::string();
  };
  auto scan = [&](std::chrono::nanoseconds margin, std::size_t& hits, std::size_t& hashed) {
    // The coarse clock file times come from ticks every few ms: a pause puts the writes
    // before the scan's start.
    std::this_thread::sleep_for(50ms);
    hash_cache c(cache_path, margin);
    auto m = scan_tree(*f.tree, 100, &c);
    REQUIRE(m);
    c.save();
    hits = c.hits();
    hashed = c.hashed();
    auto plain = scan_tree(*f.tree, 100);
    REQUIRE(plain);
    CHECK(*m == *plain);  // the cache never changes what a scan says
    return std::move(*m);
  };
  std::size_t hits = 0, hashed = 0;
  scan(0ns, hits, hashed);
  CHECK(hits == 0);
  CHECK(hashed == 20);
  scan(0ns, hits, hashed);
  CHECK(hits == 20);
  CHECK(hashed == 0);

  // New bytes of the same size written in place (the inode stays), and the old mtime put
  // back as a program could: the ctime moved, so the file is read again.
  struct stat before {};
  REQUIRE(::stat(f.in_root("f3").c_str(), &before) == 0);
  {
    std::fstream io(f.in_root("f3"), std::ios::in | std::ios::out | std::ios::binary);
    io << "CONTENT 3";
  }
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, f.in_root("f3").c_str(), times, 0) == 0);
  auto m = scan(0ns, hits, hashed);
  CHECK(hits == 19);
  CHECK(hashed == 1);
  CHECK(digest_of(m, "f3") == sha256_hex("CONTENT 3"));
  CHECK(digest_of(m, "f3") == sha256sum_of(f.in_root("f3")));

  // Racy: with the default margin a file written just now is hashed but not remembered, so
  // rewritten at once (same size, same clock tick) the next scan still reads its new bytes.
  put(f.in_root("f5"), "racy one");
  scan(hash_cache::kDefaultRacyMargin, hits, hashed);
  {
    std::fstream io(f.in_root("f5"), std::ios::in | std::ios::out | std::ios::binary);
    io << "RACY ONE";
  }
  m = scan(hash_cache::kDefaultRacyMargin, hits, hashed);
  CHECK(digest_of(m, "f5") == sha256_hex("RACY ONE"));

  // A damaged cache file costs a full hash, nothing else.
  put(cache_path, "corral-hashcache 1\n1 2 3 4 5 zz\ngarbage");
  m = scan(0ns, hits, hashed);
  CHECK(hits == 0);
  CHECK(digest_of(m, "f5") == sha256_hex("RACY ONE"));
}

TEST_CASE("a directory swapped with a symlink out while 1000 reads run never yields host bytes", "[workspace_tree]") {
  tree_fixture f;
  REQUIRE(::mkdir(f.in_root("d").c_str(), 0755) == 0);
  put(f.in_root("d/canary"), "inside");  // the same name as the host file
  f.link("../host", "swap");             // resolves to the host dir if ever followed
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> swaps{0};
  std::thread swapper([&] {
    std::string a = f.in_root("d"), b = f.in_root("swap");
    while (!stop.load()) {
      if (::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0) swaps.fetch_add(1);
    }
  });
  std::size_t inside = 0, refused = 0, other = 0, host_bytes = 0, attempts = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  // At least 1000 reads (and writes), and on until both outcomes were seen or the deadline.
  while (attempts < 1000 || ((inside == 0 || refused == 0) && std::chrono::steady_clock::now() < deadline)) {
    ++attempts;
    auto r = f.tree->read("d/canary", 0, 100);
    if (r && r->data == "inside") ++inside;
    else if (r && r->data.find("HOST") != std::string::npos) ++host_bytes;
    else if (!r && r.error().kind == failure_kind::refused) ++refused;
    else ++other;
    (void)f.tree->write("d/written-" + std::to_string(attempts % 8), "w", 0644, false);
    (void)f.tree->make_dir("d/made", 0755, true);
  }
  // The listing and the manifest walk under the same race: nothing from the host appears.
  for (int i = 0; i < 50; ++i) {
    auto listing = f.tree->list(".", max_list_depth, 1000);
    if (listing)  // the host's canary has another size than the one inside
      for (auto& e : listing->entries) CHECK_FALSE((e.name == "canary" && e.size == f.canary_bytes.size()));
    auto manifest = scan_tree(*f.tree, 1000);
    if (manifest)
      for (auto& e : *manifest) CHECK(e.sha256 != sha256_hex(f.canary_bytes));
  }
  stop = true;
  swapper.join();
  INFO("reads " << attempts << ", inside " << inside << ", refused " << refused << ", other " << other << ", swaps " << swaps);
  CHECK(attempts >= 1000);
  CHECK(swaps > 100);
  CHECK(inside > 0);
  CHECK(refused > 0);
  CHECK(host_bytes == 0);
  f.check_outside_untouched();
}

TEST_CASE("a workspace tree on a missing root fails to open, naming it", "[workspace_tree]") {
  temp_dir dir{"corral-workspace-"};
  auto opened = workspace_tree::open(dir / "absent");
  REQUIRE_FALSE(opened);
  CHECK(opened.error().message.find(dir / "absent") != std::string::npos);
  put(dir / "file", "x");
  CHECK_FALSE(workspace_tree::open(dir / "file"));
}
