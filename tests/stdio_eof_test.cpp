// The edges of a stdio session's life, judged from outside through the CLI: a request
// followed at once by EOF is answered, a child's last output before it exits is delivered
// whole, a server that cannot start is 127 with its message, and `serve --stdio` answers
// before it hangs up. Each race is looped: one lost round fails the test.
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "landlock_fixture.hpp"
#include "runtime_fixture.hpp"

using corral::testing::temp_dir;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int run_shell(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

const char* const kEcho = "import sys\nfor l in sys.stdin:\n    sys.stdout.write(l); sys.stdout.flush()\n";

} // namespace

TEST_CASE("one request then EOF through corral mcp is answered every time", "[session][eof][landlock]") {
  REQUIRE_LANDLOCK();
  temp_dir dir;
  { std::ofstream(dir / "echo.py") << kEcho; }
  const std::string request = R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})";
  { std::ofstream(dir / "in") << request << "\n"; }
  // Files: the session actor carries the messages. Pipes (as an MCP client's): the I/O
  // loop relays them itself (io_loop::relay).
  std::string in = "< in", out = "> out";
  SECTION("through files") {}
  SECTION("through pipes, relayed") {
    in = "";
    out = "| cat > out";
  }
  int answered = 0;
  const int rounds = 25;
  for (int i = 0; i < rounds; ++i) {
    // The program text goes as an argument: the jail does not see the test's temp dir.
    std::string cmd = "cd " + dir.path() + " && " + (in.empty() ? "cat in | " : "") + "timeout 60 " +
                      CORRAL_TEST_CLI + " mcp -- python3 -c \"$(cat echo.py)\" " + in + " " + out + " 2> err";
    int rc = run_shell(cmd);
    INFO("round " << i << " rc " << rc << " stderr: " << slurp(dir / "err"));
    if (slurp(dir / "out") == request + "\n") ++answered;
  }
  CHECK(answered == rounds);
}

TEST_CASE("a child that writes 4 MiB and exits at once while the client closes stdin delivers every byte",
          "[session][eof][landlock]") {
  REQUIRE_LANDLOCK();
  temp_dir dir;
  std::string before, after = " < /dev/null > out";
  SECTION("through files") {}
  SECTION("through pipes, relayed") {
    before = "true | ";
    after = " | cat > out";
  }
  for (int i = 0; i < 5; ++i) {
    // corral's own status goes to a file: in a pipeline the shell reports cat's.
    std::string cmd = "cd " + dir.path() + " && " + before + "{ timeout 60 " + CORRAL_TEST_CLI +
                      " mcp -- python3 -c 'import sys; sys.stdout.write((\"x\" * 1023 + \"\\n\") * 4096)'" +
                      " 2> err; echo $? > status; }" + after;
    run_shell(cmd);
    INFO("round " << i << " stderr: " << slurp(dir / "err"));
    CHECK(slurp(dir / "status") == "0\n");
    CHECK(slurp(dir / "out").size() == 4u * 1024 * 1024);
  }
}

TEST_CASE("a server that cannot be started is 127 with its message, never 0", "[session][eof][landlock]") {
  REQUIRE_LANDLOCK();
  temp_dir dir;
  for (int i = 0; i < 20; ++i) {
    std::string cmd = "cd " + dir.path() + " && echo '' | timeout 60 " + CORRAL_TEST_CLI +
                      " mcp -- corral-no-such-server > out 2> err";
    int rc = run_shell(cmd);
    auto err = slurp(dir / "err");
    INFO("round " << i << " stderr: " << err);
    CHECK(rc == 127);
    CHECK(err.find("corral-no-such-server") != std::string::npos);
  }
}

TEST_CASE("serve --stdio answers a request followed by EOF before it exits", "[session][eof][daemon][landlock]") {
  REQUIRE_LANDLOCK();
  temp_dir dir;
  for (int i = 0; i < 5; ++i) {
    std::string cmd = "cd " + dir.path() +
                      " && printf '{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"exec\",\"params\":{\"argv\":[\"/bin/echo\",\"hi\"]}}\\n'"
                      " | timeout 60 " + CORRAL_TEST_CLI + " serve --stdio --state-dir " + dir.path() +
                      "/state 2> err | cat > out";
    int rc = run_shell(cmd);
    auto out = slurp(dir / "out");
    INFO("round " << i << " stdout: " << out << " stderr: " << slurp(dir / "err"));
    CHECK(rc == 0);
    CHECK(out.find("\"id\":7,\"jsonrpc\":\"2.0\",\"result\"") != std::string::npos);
    CHECK(out.find("\"stdout\":\"hi\\n\"") != std::string::npos);
  }
}
