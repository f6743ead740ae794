// corral mcp --connect: the proxy against a real `corral serve` process, checked as an MCP
// client sees it (its stdout, stderr and exit status).
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/runtime_fixture.hpp"
#include "tests/served_daemon.hpp"

using namespace corral;
using namespace std::chrono_literals;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("corral mcp --connect passes lines unchanged through the daemon and mirrors the exit", "[session][mcp][daemon]") {
  testing::served_daemon d;
  testing::temp_dir dir;
  {
    std::ofstream in(dir / "in");
    in << "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n" << std::string(200 * 1024, 'q') << "\n"
       << "caf\xc3\xa9 \xff\xfe\n";
  }
  // The server answers each line with its length in bytes and exits 7 at EOF.
  std::string cmd = std::string("cd ") + dir.path() + " && timeout 60 " + CORRAL_TEST_CLI + " mcp --connect " +
                    d.socket +
                    " --tier host -- /usr/bin/python3 -u -c '"
                    "import sys\n"
                    "sys.stderr.write(\"server-log\\n\")\n"
                    "for l in sys.stdin.buffer: sys.stdout.buffer.write(str(len(l)).encode() + b\" \" + l[:5] + b\"\\n\")\n"
                    "sys.exit(7)' < in > out 2> err";
  int rc = std::system(cmd.c_str());
  INFO(read_all(dir / "err"));
  REQUIRE(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 7);
  // The \r, the 200 KiB line and bytes that are not UTF-8 all arrive intact.
  CHECK(read_all(dir / "out") == "39 {\"jso\n204801 qqqqq\n9 caf\xc3\xa9\n");
  CHECK(read_all(dir / "err").find("server-log") != std::string::npos);
}

TEST_CASE("corral mcp --connect to no daemon is refused and says where it looked", "[session][mcp][daemon]") {
  testing::temp_dir dir;
  std::string cmd = std::string("timeout 30 ") + CORRAL_TEST_CLI + " mcp --connect " + dir / "none.sock" +
                    " -- /bin/cat </dev/null >" + dir / "out" + " 2>" + dir / "err";
  int rc = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 125);
  CHECK(read_all(dir / "err").find(dir / "none.sock") != std::string::npos);
  CHECK(read_all(dir / "out").empty());
}

TEST_CASE("corral mcp --connect copies the server's stderr as it comes, and only once", "[session][mcp][daemon]") {
  testing::served_daemon d;
  testing::temp_dir dir;
  int in[2];
  REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
  std::string out = dir / "out", err = dir / "err";
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(in[0], STDIN_FILENO);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0) ::_exit(127);
    ::dup2(o, STDOUT_FILENO);
    ::dup2(e, STDERR_FILENO);
    ::execlp("timeout", "timeout", "60", CORRAL_TEST_CLI, "mcp", "--connect", d.socket.c_str(), "--tier", "host", "--",
             "/bin/sh", "-c", "echo server-log-early >&2; while read l; do echo \"$l\"; done; echo server-log-late >&2",
             nullptr);
    ::_exit(127);
  }
  ::close(in[0]);
  // Its stdin still open, the server is running: what reached stderr came live.
  bool live = testing::eventually([&] { return read_all(err).find("server-log-early") != std::string::npos; }, 20s);
  ::close(in[1]);
  int status = 0;
  bool reaped = testing::eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, 30s);
  if (!reaped) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  auto log = read_all(err);
  INFO(log);
  CHECK(live);
  REQUIRE(reaped);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(log.find("server-log-early") == log.rfind("server-log-early"));  // not again from the tail
  CHECK(log.find("server-log-late") != std::string::npos);
  CHECK(read_all(out).empty());
}

TEST_CASE("corral mcp --connect carries --env to the daemon", "[session][mcp][daemon]") {
  testing::served_daemon d;
  testing::temp_dir dir;
  // The variable was parsed into the request and then left out of session.open.
  std::string cmd = std::string("cd ") + dir.path() + " && timeout 60 " + CORRAL_TEST_CLI + " mcp --connect " +
                    d.socket +
                    " --env CORRAL_TEST_K=carried -- /usr/bin/python3 -c '"
                    "import os\n"
                    "print(os.environ.get(\"CORRAL_TEST_K\", \"unset\"), flush=True)' </dev/null > out 2> err";
  int rc = std::system(cmd.c_str());
  INFO(read_all(dir / "err"));
  REQUIRE(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 0);
  CHECK(read_all(dir / "out") == "carried\n");
}
