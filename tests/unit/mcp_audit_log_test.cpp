// The gateway's audit file (actors/mcp/mcp_audit_log.hpp): appended line by line, bounded,
// rotated once, and never opened through a symlink.
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "actors/mcp/mcp_audit_log.hpp"
#include "tests/runtime_fixture.hpp"

using namespace corral;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("the audit file is appended to, rotated once past its bound, and kept private", "[mcp][audit]") {
  testing::temp_dir s("corral-audit-");
  auto path = s / "audit.jsonl";
  {
    std::ofstream(path) << "{\"earlier\":true}\n";
  }
  auto log = mcp_audit_log::open(path, 4096);
  REQUIRE(log);
  CHECK(log->append("{\"n\":1}"));
  CHECK(read_text(path) == "{\"earlier\":true}\n{\"n\":1}\n");  // appended, nothing lost
  std::string line(1000, 'x');
  for (int i = 0; i < 10; ++i) REQUIRE(log->append(line));
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(st.st_size <= 4096);
  REQUIRE(::stat((path + ".1").c_str(), &st) == 0);
  CHECK(st.st_size <= 4096);
  // Every line is whole in one file or the other.
  auto all = read_text(path + ".1") + read_text(path);
  CHECK(all.find("x\n") != std::string::npos);
  CHECK(all.back() == '\n');
}

TEST_CASE("an audit file that is a symlink or cannot be created is refused, saying which", "[mcp][audit]") {
  testing::temp_dir s("corral-audit-");
  auto link = s / "link.jsonl";
  REQUIRE(::symlink("/etc/passwd", link.c_str()) == 0);
  auto opened = mcp_audit_log::open(link, 1 << 20);
  REQUIRE_FALSE(opened);
  CHECK_THAT(opened.error().message, Catch::Contains(link));
  auto missing = mcp_audit_log::open(s / "no/such/dir/a.jsonl", 1 << 20);
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message, Catch::Contains("cannot be opened"));
}

TEST_CASE("two writers of one audit file follow each other's rotation instead of writing into FILE.1", "[mcp][audit]") {
  testing::temp_dir s("corral-audit-");
  auto path = s / "audit.jsonl";
  auto a = mcp_audit_log::open(path, 4096);
  auto b = mcp_audit_log::open(path, 4096);
  REQUIRE(a);
  REQUIRE(b);
  std::string line(1500, 'a');
  for (int i = 0; i < 3; ++i) REQUIRE(a->append(line));  // the third rotates
  REQUIRE(b->append("{\"from\":\"b\"}"));
  CHECK(read_text(path).find("{\"from\":\"b\"}") != std::string::npos);
  CHECK(read_text(path + ".1").find("from") == std::string::npos);
}
