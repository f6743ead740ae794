// tiers/workspace/change_manifest: diffs of two manifests and the manifest's text form
// (scanning a real tree is in workspace_tree_test).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "tiers/workspace/change_manifest.hpp"

using namespace corral;

namespace {

const std::string hash_a(64, 'a');
const std::string hash_b(64, 'b');

manifest_entry file(std::string path, std::string sha = hash_a, std::uint64_t size = 3, std::uint32_t mode = 0644) {
  return manifest_entry{std::move(path), 'f', mode, size, std::move(sha), "", 1'700'000'000'000'000'000};
}
manifest_entry dir(std::string path, std::uint32_t mode = 0755) { return manifest_entry{std::move(path), 'd', mode, 0, "", "", 5}; }
manifest_entry symlink_entry(std::string path, std::string target) {
  auto size = target.size();
  return manifest_entry{std::move(path), 'l', 0777, size, "", std::move(target), 7};
}

std::vector<tree_change> diff(const std::vector<manifest_entry>& a, const std::vector<manifest_entry>& b,
                              std::size_t max_changes = 100) {
  bool truncated = true;
  auto changes = diff_manifests(a, b, max_changes, truncated);
  CHECK_FALSE(truncated);
  return changes;
}

} // namespace

TEST_CASE("a manifest diff lists added, modified and removed entries in path order", "[unit][change_manifest]") {
  std::vector<manifest_entry> before{dir("a"), file("a/kept"), file("a/old"), file("b", hash_a)};
  std::vector<manifest_entry> after{dir("a"), file("a/kept"), file("a/young"), file("b", hash_b), file("c")};
  auto changes = diff(before, after);
  REQUIRE(changes.size() == 4);
  CHECK(changes[0].what == tree_change::kind::removed);
  CHECK(changes[0].entry.path == "a/old");
  CHECK_FALSE(changes[0].before);
  CHECK(changes[1].what == tree_change::kind::added);
  CHECK(changes[1].entry.path == "a/young");
  CHECK(changes[2].what == tree_change::kind::modified);
  CHECK(changes[2].entry.sha256 == hash_b);
  REQUIRE(changes[2].before);
  CHECK(changes[2].before->sha256 == hash_a);
  CHECK(changes[3].what == tree_change::kind::added);
  CHECK(changes[3].entry.path == "c");
  CHECK(diff(after, after).empty());
  CHECK(diff({}, {}).empty());
}

TEST_CASE("a manifest diff counts mode, type, size and link target changes but not mtime", "[unit][change_manifest]") {
  auto touched = file("x");
  touched.mtime_ns += 1'000'000'000;
  CHECK(diff({file("x")}, {touched}).empty());

  auto mode_only = diff({file("x", hash_a, 3, 0644)}, {file("x", hash_a, 3, 0755)});
  REQUIRE(mode_only.size() == 1);
  CHECK(mode_only[0].what == tree_change::kind::modified);
  CHECK(mode_only[0].before->mode == 0644);
  CHECK(mode_only[0].entry.mode == 0755);

  CHECK(diff({file("x", hash_a, 3)}, {file("x", hash_a, 4)}).size() == 1);

  auto retargeted = diff({symlink_entry("l", "a")}, {symlink_entry("l", "b")});
  REQUIRE(retargeted.size() == 1);
  CHECK(retargeted[0].entry.link_target == "b");
  CHECK(retargeted[0].before->link_target == "a");

  auto file_to_dir = diff({file("x")}, {dir("x")});
  REQUIRE(file_to_dir.size() == 1);
  CHECK(file_to_dir[0].what == tree_change::kind::modified);
  CHECK(file_to_dir[0].entry.type == 'd');
  CHECK(file_to_dir[0].before->type == 'f');
}

TEST_CASE("a manifest diff stops at max_changes and says it was truncated", "[unit][change_manifest]") {
  std::vector<manifest_entry> after;
  for (char c = 'a'; c <= 'j'; ++c) after.push_back(file(std::string(1, c)));
  bool truncated = false;
  auto changes = diff_manifests({}, after, 4, truncated);
  CHECK(truncated);
  REQUIRE(changes.size() == 4);
  CHECK(changes[3].entry.path == "d");
  changes = diff_manifests({}, after, 10, truncated);
  CHECK_FALSE(truncated);
  CHECK(changes.size() == 10);
}

TEST_CASE("a manifest round-trips through its text form, any byte in a path included", "[unit][change_manifest]") {
  std::string every_byte;
  for (int c = 1; c < 256; ++c)
    if (c != '/') every_byte += static_cast<char>(c);
  std::vector<manifest_entry> entries{
      dir("a b"),
      file("a b/new\nline", hash_a, 0, 04755),
      symlink_entry("a b/percent%41", "../tab\there %"),
      manifest_entry{"fifo", 'o', 0600, 0, "", "", -12345},
      file(every_byte, hash_b, 18'446'744'073'709'551'615ULL, 0),
  };
  std::sort(entries.begin(), entries.end(), [](auto& a, auto& b) { return a.path < b.path; });
  auto text = serialize_manifest(entries);
  // One line per entry plus the header: no raw newline or tab leaked from a path.
  CHECK(std::count(text.begin(), text.end(), '\n') == static_cast<long>(entries.size()) + 1);
  auto back = parse_manifest(text);
  REQUIRE(back);
  CHECK(*back == entries);
  CHECK(serialize_manifest(*back) == text);

  auto none = parse_manifest(serialize_manifest({}));
  REQUIRE(none);
  CHECK(none->empty());
}

TEST_CASE("a damaged manifest text is refused, naming the line", "[unit][change_manifest]") {
  auto good = serialize_manifest({dir("a"), file("a/b"), symlink_entry("c", "a")});
  REQUIRE(parse_manifest(good));
  auto refused = [](const std::string& text) {
    auto r = parse_manifest(text);
    if (r) FAIL("accepted: " << text);
    return r.error().message;
  };
  CHECK(refused("").find("corral-manifest 1") != std::string::npos);
  CHECK(refused(good.substr(0, good.size() - 1)).find("line 4") != std::string::npos);  // torn last line
  std::string header = "corral-manifest 1\n";
  std::string sha(64, 'c');
  CHECK(refused(header + "x\t644\t0\t0\t\ta\t\n").find("type") != std::string::npos);
  CHECK(refused(header + "d\t9\t0\t0\t\ta\t\n").find("mode") != std::string::npos);
  CHECK(refused(header + "d\t10000\t0\t0\t\ta\t\n").find("mode") != std::string::npos);
  CHECK(refused(header + "d\t755\t-1\t0\t\ta\t\n").find("size") != std::string::npos);
  CHECK(refused(header + "d\t755\t0\tx\t\ta\t\n").find("mtime") != std::string::npos);
  CHECK(refused(header + "f\t644\t0\t0\t\ta\t\n").find("sha256") != std::string::npos);
  CHECK(refused(header + "f\t644\t0\t0\t" + std::string(64, 'G') + "\ta\t\n").find("sha256") != std::string::npos);
  CHECK(refused(header + "d\t755\t0\t0\t" + sha + "\ta\t\n").find("sha256") != std::string::npos);
  CHECK(refused(header + "d\t755\t0\t0\t\ta%2\t\n").find("escape") != std::string::npos);
  CHECK(refused(header + "d\t755\t0\t0\t\ta%41\t\n").find("escape") != std::string::npos);  // 'A' needs none
  CHECK(refused(header + "d\t755\t0\t0\t\ta b\t\n").find("escape") != std::string::npos);
  CHECK(refused(header + "d\t755\t0\t0\t\t\t\n").find("empty path") != std::string::npos);
  CHECK(refused(header + "l\t777\t0\t0\t\ta\t\n").find("target") != std::string::npos);
  CHECK(refused(header + "d\t755\t0\t0\t\ta\t\t\n").find("fields") != std::string::npos);
  CHECK(refused(header + "d\t755\t0\t0\t\ta\n").find("fields") != std::string::npos);
  CHECK(refused(header + "d\t755\t0\t0\t\tb\t\nd\t755\t0\t0\t\ta\t\n").find("order") != std::string::npos);
  CHECK(refused(header + "d\t755\t0\t0\t\ta\t\nd\t755\t0\t0\t\ta\t\n").find("order") != std::string::npos);
}
