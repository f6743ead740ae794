// Output floods: however much a child writes, the result holds the cap, counts the rest,
// says so, and the runtime's memory stays bounded.
#include <catch2/catch.hpp>

#include <fstream>

#include "runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;
constexpr std::uint64_t kDefaultCap = 1 * kMiB;  // limits::output_cap's default
// Well above the cap and the loop's buffers, far below what keeping a flood would need.
constexpr std::uint64_t kRssGrowthBound = 64 * kMiB;

// This process's peak resident set (VmHWM), in bytes.
std::uint64_t peak_rss() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  FAIL("no VmHWM in /proc/self/status");
  return 0;
}

// Checks a stream flooded with `total` NUL bytes against the default cap.
void check_flooded(const captured_stream& s, std::uint64_t total) {
  CHECK(s.truncated);
  CHECK(s.dropped_bytes == total - kDefaultCap);
  // Exactly the cap: nothing of corral's is appended to the program's bytes.
  CHECK(s.data == std::string(kDefaultCap, '\0'));
}

// The host profile with a timeout no loaded machine reaches while draining a flood.
profile patient_profile() {
  auto p = test_runtime::host_profile();
  p.limit.timeout = 240s;
  return p;
}

} // namespace

TEST_CASE("a 10 GiB stdout flood keeps exactly the cap, counts the rest, in bounded memory", "[flood]") {
  // 10 GiB drains in about 4 s on an idle 2-core machine, but took 30 s beside four
  // parallel builds: the case is about the cap and memory, not speed, so it gets 240 s
  // (inside ctest's 300 s bound).
  constexpr std::uint64_t total = 10 * kGiB;
  test_runtime t(patient_profile());
  auto before = peak_rss();
  auto r = t.run(program({"head", "-c", std::to_string(total), "/dev/zero"}));
  auto growth = peak_rss() - before;
  REQUIRE(r);
  CHECK_FALSE(r->timed_out);
  CHECK(r->exit_code == 0);
  CHECK(r->how == verdict::output_truncated);
  check_flooded(r->out, total);
  CHECK(r->err.data.empty());
  CHECK_FALSE(r->err.truncated);
  INFO("peak RSS growth: " << growth / kMiB << " MiB");
  CHECK(growth < kRssGrowthBound);
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("stdout and stderr flooded at once are each capped on their own", "[flood]") {
  constexpr std::uint64_t each = 2 * kGiB;
  test_runtime t(patient_profile());
  auto before = peak_rss();
  auto n = std::to_string(each);
  auto r = t.run(shell("head -c " + n + " /dev/zero >&2 & head -c " + n + " /dev/zero; wait"));
  auto growth = peak_rss() - before;
  REQUIRE(r);
  CHECK_FALSE(r->timed_out);
  CHECK(r->exit_code == 0);
  CHECK(r->how == verdict::output_truncated);
  check_flooded(r->out, each);
  check_flooded(r->err, each);
  INFO("peak RSS growth: " << growth / kMiB << " MiB");
  CHECK(growth < kRssGrowthBound);
}

TEST_CASE("a cap in the middle of a multi-byte character cuts at the character boundary", "[flood][utf8]") {
  struct character {
    const char* name;
    std::string bytes;
  };
  auto c = GENERATE(values<character>({{"2-byte é", "\xC3\xA9"},
                                       {"3-byte €", "\xE2\x82\xAC"},
                                       {"4-byte 🦀", "\xF0\x9F\xA6\x80"}}));
  INFO(c.name);
  test_runtime t;
  // One ASCII byte, then the character repeated: with a cap of 1 + k*len + 1 the kept
  // bytes would end one byte into a character.
  std::string body = "a";
  for (int i = 0; i < 100; ++i) body += c.bytes;
  constexpr int whole = 10;
  const std::uint64_t cap = 1 + whole * c.bytes.size() + 1;
  temp_dir dir;
  {
    std::ofstream f(dir / "out", std::ios::binary);
    f << body;
  }
  auto req = program({"cat", dir / "out"});
  req.output_cap = cap;
  auto r = t.run(req);
  REQUIRE(r);
  std::string kept = "a";
  for (int i = 0; i < whole; ++i) kept += c.bytes;
  auto dropped = body.size() - kept.size();
  CHECK(r->out.truncated);
  CHECK(r->out.dropped_bytes == dropped);
  CHECK(r->out.data == kept);
  CHECK(r->how == verdict::output_truncated);
}

TEST_CASE("output exactly at the cap is not truncated", "[flood][utf8]") {
  test_runtime t;
  auto req = shell("printf 'abcd\\342\\202\\254'");  // 4 + 3 bytes
  req.output_cap = 7;
  auto r = t.run(req);
  REQUIRE(r);
  CHECK_FALSE(r->out.truncated);
  CHECK(r->out.dropped_bytes == 0);
  CHECK(r->out.data == "abcd\xE2\x82\xAC");
  CHECK(r->how == verdict::exited);
}
