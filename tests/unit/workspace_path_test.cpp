// tiers/workspace/workspace_path: a caller's path mapped beneath a workspace's root, on
// paper only (workspace_tree_test covers what the disk can do to it).
#include <catch2/catch.hpp>

#include <string>

#include "tiers/workspace/workspace_path.hpp"

using namespace corral;

namespace {

std::string mapped(std::string_view path, std::string_view mount_at = "/work") {
  auto r = workspace_relative_path(path, mount_at);
  if (!r) FAIL("refused " << std::string(path) << ": " << r.error().describe());
  return *r;
}

failure refusal(std::string_view path, std::string_view mount_at = "/work") {
  auto r = workspace_relative_path(path, mount_at);
  if (r) FAIL("accepted " << std::string(path) << " as " << *r);
  return r.error();
}

} // namespace

TEST_CASE("workspace paths under mount_at map to paths relative to the root", "[unit][workspace_path]") {
  CHECK(mapped("/work/a/b") == "a/b");
  CHECK(mapped("/work") == ".");
  CHECK(mapped("/work/") == ".");
  CHECK(mapped("/work/.") == ".");
  CHECK(mapped("/work/a/b/") == "a/b");
  CHECK(mapped("//work//a///b") == "a/b");
  CHECK(mapped("/work/./a/./b/.") == "a/b");
  CHECK(mapped("/home/user/x", "/home/user/") == "x");
  CHECK(mapped("/anything/at/all", "/") == "anything/at/all");
}

TEST_CASE("relative workspace paths are relative to the root", "[unit][workspace_path]") {
  CHECK(mapped("a") == "a");
  CHECK(mapped("a/b/c.txt") == "a/b/c.txt");
  CHECK(mapped(".") == ".");
  CHECK(mapped("./") == ".");
  CHECK(mapped("./a//b/") == "a/b");
  // Not under /work: a relative path named work is just a directory of the root.
  CHECK(mapped("work/a") == "work/a");
  // Names that only look special stay names.
  CHECK(mapped("...") == "...");
  CHECK(mapped("..a/b..") == "..a/b..");
  CHECK(mapped("a\nb/c d") == "a\nb/c d");
}

TEST_CASE("dot-dot is refused anywhere in a workspace path, never resolved", "[unit][workspace_path]") {
  for (auto p : {"..", "../x", "a/../b", "a/b/..", "/work/..", "/work/a/../../etc/passwd", "/work/../work/a", "./.."}) {
    auto f = refusal(p);
    CHECK(f.kind == failure_kind::refused);
    CHECK(f.message.find("'..'") != std::string::npos);
  }
}

TEST_CASE("absolute workspace paths outside mount_at are refused, naming it", "[unit][workspace_path]") {
  for (auto p : {"/etc/passwd", "/", "/workx", "/workspace/a", "/wor", "/tmp/work/a"}) {
    auto f = refusal(p);
    CHECK(f.kind == failure_kind::refused);
    CHECK(f.message.find("/work") != std::string::npos);
    CHECK(f.message.find("outside") != std::string::npos);
  }
  // A root nested below another: only paths under the nested one are its own.
  CHECK(refusal("/work/a", "/work/sub").kind == failure_kind::refused);
  CHECK(mapped("/work/sub/a", "/work/sub") == "a");
}

TEST_CASE("malformed workspace paths are invalid requests that name the rule", "[unit][workspace_path]") {
  auto empty = refusal("");
  CHECK(empty.kind == failure_kind::invalid_request);
  CHECK(empty.message.find("empty") != std::string::npos);

  auto nul = refusal(std::string_view("a\0b", 3));
  CHECK(nul.kind == failure_kind::invalid_request);
  CHECK(nul.message.find("NUL") != std::string::npos);
  CHECK(nul.message.find("a\\x00b") != std::string::npos);

  std::string longest(max_workspace_path_bytes, 'x');
  CHECK(mapped(longest) == longest);
  auto too_long = refusal(longest + "x");
  CHECK(too_long.kind == failure_kind::invalid_request);
  CHECK(too_long.message.find("4096") != std::string::npos);

  std::string deepest, too_deep;
  for (std::size_t i = 0; i < max_workspace_path_components; ++i) deepest += "d/";
  CHECK(mapped(deepest).size() == deepest.size() - 1);
  CHECK(mapped("/work/" + deepest).size() == deepest.size() - 1);
  auto deep = refusal(deepest + "d");
  CHECK(deep.kind == failure_kind::invalid_request);
  CHECK(deep.message.find("64") != std::string::npos);
  // `.` and empty components do not count.
  std::string dotted;
  for (int i = 0; i < 200; ++i) dotted += "./";
  CHECK(mapped(dotted + "a") == "a");
}

TEST_CASE("a workspace mount_at that is not a plain absolute path is refused", "[unit][workspace_path]") {
  for (auto m : {"", "work", "/work/../etc", "./work"}) {
    auto f = refusal("a", m);
    CHECK(f.kind == failure_kind::invalid_request);
    CHECK(f.message.find("mount_at") != std::string::npos);
  }
}
