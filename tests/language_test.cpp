// Every built-in language on the host tier, through the runtime: the ordinary program of
// each, its arguments, and how compile steps fail and are bounded.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

// Whether `name` is an executable on our PATH: the runtime resolves bare names the same way.
bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  return false;
}

// WARNs (so the skip is visible in the output) and returns false when a tool is missing.
bool have(const std::string& tool) {
  if (on_path(tool)) return true;
  WARN("skipped: " << tool << " is not installed on PATH");
  return false;
}

exec_request snippet(const std::string& language, const std::string& code, std::vector<std::string> args = {}) {
  exec_request r;
  r.language = language;
  r.code = code;
  r.argv = std::move(args);
  return r;  // the profile's timeout (30 s): a request may only tighten it
}

// REQUIRE(r), saying why when the runtime refused.
void require_ran(const expected<exec_result>& r) {
  if (!r) FAIL("exec failed: " << r.error().describe());
}

} // namespace

TEST_CASE("command runs its code with sh -c", "[lang]") {
  test_runtime t;
  auto r = t.run(shell("x=6; echo $((x*7)); exit 4"));
  require_ran(r);
  CHECK(r->out.data == "42\n");
  CHECK(r->exit_code == 4);
  CHECK(r->how == verdict::exited);
}

TEST_CASE("argv passes each argument through untouched", "[lang]") {
  test_runtime t;
  auto r = t.run(program({"/bin/sh", "-c", "printf '[%s]' \"$@\"", "sh", "", "two words", "$(id)", "'q'"}));
  require_ran(r);
  CHECK(r->out.data == "[][two words][$(id)]['q']");
}

TEST_CASE("python runs with python3 and receives its arguments", "[lang]") {
  if (!have("python3")) return;
  test_runtime t;
  auto r = t.run(snippet("python", "import sys\nprint(6*7)\nprint(sys.argv[1:])\nsys.exit(3)\n", {"a", "b c"}));
  require_ran(r);
  CHECK(r->out.data == "42\n['a', 'b c']\n");
  CHECK(r->exit_code == 3);
  CHECK(r->how == verdict::exited);
}

TEST_CASE("python's exceptions come back on stderr with its exit status", "[lang]") {
  if (!have("python3")) return;
  test_runtime t;
  auto r = t.run(snippet("python", "raise ValueError('boom')\n"));
  require_ran(r);
  CHECK(r->exit_code == 1);
  CHECK(r->err.data.find("ValueError: boom") != std::string::npos);
  CHECK(r->how == verdict::exited);  // a runtime error is not a compile failure
}

TEST_CASE("javascript runs with node and receives its arguments", "[lang]") {
  if (!have("node")) return;
  test_runtime t;
  auto r = t.run(snippet("javascript", "console.log(6*7); console.log(JSON.stringify(process.argv.slice(2))); process.exit(2)",
                         {"x", "y z"}));
  require_ran(r);
  CHECK(r->out.data == "42\n[\"x\",\"y z\"]\n");
  CHECK(r->exit_code == 2);
}

TEST_CASE("typescript without a runner is a clear error and nothing runs", "[lang]") {
  temp_dir dir;
  auto marker = dir / "ran";
  test_runtime t;
  // Valid JavaScript too: run as JavaScript it would leave the marker behind.
  auto r = t.run(snippet("typescript", "require('fs').writeFileSync('" + marker + "', 'x');\n"
                                       "const n: number = 42; console.log(n);\n"));
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == failure_kind::invalid_request);
  CHECK(r.error().message.find("TypeScript runner") != std::string::npos);
  CHECK(r.error().message.find("typescript") != std::string::npos);
  CHECK(::access(marker.c_str(), F_OK) != 0);
  CHECK(t.rt->tracked_processes() == 0);
}

TEST_CASE("c compiles with cc, then runs with its arguments", "[lang][compile]") {
  if (!have("cc")) return;
  test_runtime t;
  auto r = t.run(snippet("c",
                         "#include <stdio.h>\n"
                         "int main(int argc, char** argv) {\n"
                         "  printf(\"%d\\n\", 6 * 7);\n"
                         "  for (int i = 1; i < argc; ++i) printf(\"[%s]\", argv[i]);\n"
                         "  return 9;\n"
                         "}\n",
                         {"one", "t w o"}));
  require_ran(r);
  CHECK(r->err.data == "");
  CHECK(r->out.data == "42\n[one][t w o]");
  CHECK(r->exit_code == 9);
  CHECK(r->how == verdict::exited);
}

TEST_CASE("cpp compiles with c++, then runs", "[lang][compile]") {
  if (!have("c++")) return;
  test_runtime t;
  auto r = t.run(snippet("cpp",
                         "#include <iostream>\n#include <vector>\n#include <numeric>\n"
                         "int main() { std::vector<int> v{6, 7}; "
                         "std::cout << std::accumulate(v.begin(), v.end(), 1, std::multiplies<>()) << '\\n'; }\n"));
  require_ran(r);
  CHECK(r->err.data == "");
  CHECK(r->out.data == "42\n");
  CHECK(r->exit_code == 0);
}

TEST_CASE("rust compiles with rustc, then runs with its arguments", "[lang][compile]") {
  if (!have("rustc") || !have("cc")) return;  // rustc links through cc
  test_runtime t;
  auto r = t.run(snippet("rust",
                         "fn main() {\n"
                         "  println!(\"{}\", 6 * 7);\n"
                         "  let a: Vec<String> = std::env::args().skip(1).collect();\n"
                         "  println!(\"{:?}\", a);\n"
                         "  std::process::exit(6);\n"
                         "}\n",
                         {"r", "s t"}));
  require_ran(r);
  INFO("stderr: " << r->err.data);
  CHECK(r->out.data == "42\n[\"r\", \"s t\"]\n");
  CHECK(r->exit_code == 6);
  CHECK(r->how == verdict::exited);
}

TEST_CASE("a compile error is the compile_failed verdict with the compiler's stderr", "[lang][compile]") {
  struct broken {
    std::string language, tool, code, expect_in_stderr;
  };
  auto b = GENERATE(values<broken>({
      {"c", "cc", "int main(void) { return undeclared_thing; }\n", "undeclared_thing"},
      {"cpp", "c++", "int main() { std::string s = 1; }\n", "error"},
      {"rust", "rustc", "fn main() { let x: u32 = \"text\"; }\n", "mismatched types"},
  }));
  if (!have(b.tool) || (b.language == "rust" && !have("cc"))) return;
  test_runtime t;
  auto r = t.run(snippet(b.language, b.code));
  require_ran(r);
  INFO(b.language << " stderr: " << r->err.data);
  CHECK(r->how == verdict::compile_failed);
  CHECK(r->exit_code.value_or(0) != 0);
  CHECK(r->err.data.find(b.expect_in_stderr) != std::string::npos);
  CHECK(r->out.data.empty());  // the run step never started
  CHECK_FALSE(r->timed_out);
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("a compile step that hangs is bounded by the execution's timeout", "[lang][compile][timeout]") {
  if (!have("cc")) return;
  temp_dir dir;
  // Opening a FIFO nobody writes to blocks the preprocessor forever, without using memory.
  auto fifo = dir / "never-written";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  test_runtime t;
  auto req = snippet("c", "#include \"" + fifo + "\"\nint main(void) { return 0; }\n");
  req.timeout = 1s;
  auto start = std::chrono::steady_clock::now();
  auto r = t.run(req);
  auto took = std::chrono::steady_clock::now() - start;
  require_ran(r);
  CHECK(r->how == verdict::timed_out);
  CHECK(r->timed_out);
  CHECK(took < 15s);
  CHECK(tracked_after_settling(*t.rt) == 0);
}
