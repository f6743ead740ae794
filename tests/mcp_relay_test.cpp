// corral mcp over pipes, as an MCP client runs it: the I/O loop relays the messages itself
// (actors/io/message_relay.cpp). Judged from outside: what reaches each side, what is
// refused, how much memory a client that stops reading costs, and that a client that goes
// away ends the server.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "tests/runtime_fixture.hpp"

extern char** environ;

namespace corral {

using namespace testing;
using namespace std::chrono_literals;

namespace {

// VmRSS of a process in KiB, or -1 once it is gone.
long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// Waits up to `bound` for the child; its wait status, or -1 (then it was killed).
int wait_bounded(pid_t pid, std::chrono::milliseconds bound) {
  auto until = std::chrono::steady_clock::now() + bound;
  int status = 0;
  while (std::chrono::steady_clock::now() < until) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(20ms);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

} // namespace

TEST_CASE("corral mcp over pipes relays lines unchanged and drops a message over the limit each way, saying so",
          "[session][mcp][host]") {
  temp_dir dir;
  {
    std::ofstream in(dir / "in");
    in << "{\"a\":1}\n" << std::string(1500, 'X') << "\n" << "big\n" << "{\"b\":2}\n";
  }
  // Echoes each line; "big" is answered with a line over the limit, then "after-big".
  const std::string server = "import sys\n"
                             "for l in sys.stdin:\n"
                             "    if l.startswith(\"big\"): sys.stdout.write(\"B\" * 2000 + \"\\n\" + \"after-big\\n\")\n"
                             "    else: sys.stdout.write(l)\n"
                             "    sys.stdout.flush()\n";
  { std::ofstream(dir / "server.py") << server; }  // passed as -c: the child starts in its scratch dir
  std::string cmd = "cd " + dir.path() + " && cat in | { timeout 60 " + CORRAL_TEST_CLI +
                    " mcp -v --max-message 1000 --tier host --allow-host -- /usr/bin/python3 -c \"$(cat server.py)\" 2> err;"
                    " echo $? > status; } | cat > out";
  REQUIRE(std::system(cmd.c_str()) == 0);
  auto err = read_text(dir / "err");
  INFO("stderr: " << err);
  // The attempt took the relay's path...
  CHECK(err.find("relayed by the I/O loop") != std::string::npos);
  // ...every message within the limit passed in order, the two over it did not.
  CHECK(read_text(dir / "out") == "{\"a\":1}\nafter-big\n{\"b\":2}\n");
  CHECK(err.find("not forwarded: from the client") != std::string::npos);
  CHECK(err.find("not forwarded: from the child") != std::string::npos);
  CHECK(read_text(dir / "status") == "0\n");
}

TEST_CASE("a client that stops reading blocks the server, not corral's memory, and one that goes away ends it",
          "[session][mcp][host]") {
  int to_corral[2], from_corral[2];
  REQUIRE(::pipe2(to_corral, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(from_corral, O_CLOEXEC) == 0);
  // The server writes 1 KB lines as fast as its stdout takes them, forever.
  std::vector<std::string> args = {CORRAL_TEST_CLI, "mcp", "-v", "--tier", "host", "--allow-host", "--",
                                   "/usr/bin/python3", "-c",
                                   "import sys\nline = 'y' * 1000 + '\\n'\nwhile True: sys.stdout.write(line)\n"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, to_corral[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, from_corral[1], STDOUT_FILENO);
  pid_t corral = -1;
  REQUIRE(::posix_spawn(&corral, argv[0], &fa, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(to_corral[0]);
  ::close(from_corral[1]);

  // Nobody reads: past the relay's window the server must block on its full stdout.
  std::this_thread::sleep_for(1500ms);
  long early = rss_kib(corral);
  std::this_thread::sleep_for(1500ms);
  long late = rss_kib(corral);
  INFO("corral's RSS: " << early << " KiB, then " << late << " KiB");
  REQUIRE(early > 0);
  // Unpaced, the server's ~1 GB/s would show here as hundreds of MiB.
  CHECK(late - early < 32 * 1024);
  // The server did write: what the pipe holds is its lines, whole.
  char buf[4096];
  ssize_t n = ::read(from_corral[0], buf, sizeof buf);
  REQUIRE(n > 1001);
  CHECK(std::string(buf, 1001) == std::string(1000, 'y') + "\n");

  // The client goes away: corral ends the server (EOF, the grace, then SIGTERM) and exits.
  ::close(from_corral[0]);
  int status = wait_bounded(corral, 20s);
  ::close(to_corral[1]);
  CHECK(status != -1);
  CHECK(WIFEXITED(status));
}

} // namespace corral
