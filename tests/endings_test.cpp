// How `corral run` (and `shell`) end, judged from outside the built CLI: the default limits
// with no profile, the limit flags, output that streams while the program still runs,
// signals to the CLI, and the one line on stderr that says why.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <regex>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "config/durations.hpp"
#include "config/limits.hpp"
#include "proc_file.hpp"
#include "runtime_fixture.hpp"

extern char** environ;

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// The CLI as a child we can watch while it runs: read its stdout line by line, signal it,
// and collect everything at the end. Every wait is bounded; the destructor SIGKILLs.
class cli_child {
public:
  // `hold_stdin`: its stdin is a pipe we keep open (an MCP client that has not finished);
  // otherwise /dev/null.
  cli_child(std::vector<std::string> args, const std::string& cwd, bool hold_stdin = false) {
    args.insert(args.begin(), CORRAL_TEST_CLI);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "CORRAL_", 7) != 0) env.emplace_back(*e);
    env.emplace_back("CORRAL_ALLOW_HOST=1");  // only where a test names --tier host
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    int out[2], err[2], in[2] = {-1, -1};
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    if (hold_stdin) REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (hold_stdin) posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
    else posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
    posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
    int rc = ::posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    ::close(err[1]);
    if (hold_stdin) ::close(in[0]);
    stdin_ = in[1];
    fds_[0] = out[0];
    fds_[1] = err[0];
    REQUIRE(rc == 0);
  }
  ~cli_child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (int fd : {fds_[0], fds_[1], stdin_})
      if (fd >= 0) ::close(fd);
  }

  // Reads until stdout holds a full line or `bound` passes; the line, or "" on timeout/EOF.
  std::string first_line(std::chrono::milliseconds bound) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (out.find('\n') == std::string::npos && pump(deadline)) {}
    auto nl = out.find('\n');
    return nl == std::string::npos ? "" : out.substr(0, nl + 1);
  }

  void signal(int sig) { REQUIRE(::kill(pid_, sig) == 0); }

  // True when the CLI has not exited within `d` (both pipes still open).
  bool still_running_after(std::chrono::milliseconds d) {
    auto deadline = std::chrono::steady_clock::now() + d;
    while (pump(deadline)) {}
    return fds_[0] >= 0 || fds_[1] >= 0 ? ::waitpid(pid_, nullptr, WNOHANG) == 0 : false;
  }

  // Drains both pipes to EOF and reaps; the exit status (128+N for signal N), or -1 when
  // it overran `bound` (then it is SIGKILLed).
  int finish(std::chrono::milliseconds bound = 60s) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (fds_[0] >= 0 || fds_[1] >= 0)
      if (!pump(deadline)) break;
    if (fds_[0] >= 0 || fds_[1] >= 0) return -1;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::string out, err;

private:
  // One poll round; false once the deadline passed or both pipes are closed.
  bool pump(std::chrono::steady_clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= 0ms || (fds_[0] < 0 && fds_[1] < 0)) return false;
    pollfd p[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};
    if (::poll(p, 2, static_cast<int>(left.count())) <= 0) return std::chrono::steady_clock::now() < deadline;
    std::string* sinks[2] = {&out, &err};
    char buf[65536];
    for (int k = 0; k < 2; ++k) {
      if (p[k].fd < 0 || !(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(p[k].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[k]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds_[k]);
        fds_[k] = -1;
      }
    }
    return true;
  }

  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};
  int stdin_ = -1;
  bool reaped_ = false;
};

struct finished {
  int status;
  std::string out, err;
};

finished run_to_end(std::vector<std::string> args, std::chrono::milliseconds bound = 90s) {
  temp_dir cwd{"corral-endings-cwd-"};
  cli_child c(std::move(args), cwd.path());
  int status = c.finish(bound);
  return {status, c.out, c.err};
}

bool landlock_usable(std::string& why) {
  auto r = run_to_end({"run", "--", "/bin/true"});
  why = r.err;
  return r.status == 0;
}

#define REQUIRE_LANDLOCK()                                                        \
  do {                                                                            \
    std::string why;                                                              \
    if (!landlock_usable(why)) {                                                  \
      WARN("skipped: the landlock tier cannot run here: " << why);               \
      return;                                                                     \
    }                                                                             \
  } while (false)

// The execution id from -v's debug line "execution <id> tier=… verdict=…".
std::string execution_id(const std::string& err) {
  std::smatch m;
  if (std::regex_search(err, m, std::regex("execution (\\S+) tier=\\S+ verdict="))) return m[1];
  return "";
}

// Cgroup dirs of that execution still present, in any hierarchy.
std::vector<std::string> cgroups_left(const std::string& id) {
  std::vector<std::string> left;
  std::error_code ec;
  for (auto& h : fs::directory_iterator("/sys/fs/cgroup", ec)) {
    for (auto dir : {h.path() / "corral" / id, h.path() / id})
      if (fs::exists(dir, ec)) left.push_back(dir.string());
  }
  return left;
}

// The processes running `sleep <token>` (the test's own unique sleep; not the CLI, whose
// own command line holds the token too).
std::vector<int> processes_with(const std::string& token) {
  std::vector<int> found;
  std::error_code ec;
  for (auto& e : fs::directory_iterator("/proc", ec)) {
    auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto cmd = read_proc_file(e.path() / "cmdline");  // the process may exit meanwhile
    auto nul = cmd.find('\0');
    if (nul == std::string::npos) continue;
    auto program = cmd.substr(0, nul);
    bool sleep = program == "sleep" || (program.size() > 6 && program.compare(program.size() - 6, 6, "/sleep") == 0);
    if (sleep && cmd.compare(nul + 1, token.size() + 1, token + '\0') == 0) found.push_back(std::stoi(name));
  }
  return found;
}

// True once `sleep <token>` runs (its shell forks and execs it after the line we read).
bool sleeping_soon(const std::string& token) {
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (processes_with(token).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  return !processes_with(token).empty();
}

// A sleep duration nobody else runs: how a test finds its own program among the machine's.
std::string unique_sleep() {
  static int n = 0;
  return std::to_string(600 + (::getpid() % 1000)) + "." + std::to_string(++n) + "01";
}

} // namespace

TEST_CASE("durations take ms, s, m, h or plain seconds, and refuse anything else", "[endings][flags]") {
  CHECK(*parse_duration("500ms") == 500ms);
  CHECK(*parse_duration("1s") == 1000ms);
  CHECK(*parse_duration("5m") == 300'000ms);
  CHECK(*parse_duration("1.5") == 1500ms);
  CHECK(*parse_duration("2h") == 7'200'000ms);
  for (const char* bad : {"", "5x", "0", "0s", "-1", "ms", "1 s", "0.0001ms", "99999999h"}) {
    INFO(bad);
    CHECK_FALSE(parse_duration(bad).has_value());
  }
}

TEST_CASE("limit flags: bad units and absurd values are refused naming the floor", "[endings][flags]") {
  struct refusal {
    std::vector<std::string> flag;
    const char* says;
  };
  for (auto& [flag, says] : {refusal{{"--timeout", "5x"}, "unknown unit 'x'"},
                             refusal{{"--timeout", "0"}, "at least 1ms"},
                             refusal{{"--memory", "512k"}, "floor of 1 MiB"},
                             refusal{{"--pids", "0"}, "at least 1"},
                             refusal{{"--pids", "many"}, "whole number"},
                             refusal{{"--cpu", "0"}, "floor of 0.01"}}) {
    for (std::string command : {"run", "mcp", "shell"}) {
      std::vector<std::string> args{command};
      args.insert(args.end(), flag.begin(), flag.end());
      args.insert(args.end(), {"--", "/bin/echo", "ran"});
      auto r = run_to_end(args, 20s);
      INFO(command << " " << flag[0] << " " << flag[1] << ": " << r.err);
      CHECK(r.status == 125);
      CHECK(r.out.find("ran") == std::string::npos);
      CHECK(r.err.find(flag[0]) != std::string::npos);
      CHECK(r.err.find(says) != std::string::npos);
    }
  }
}

TEST_CASE("mcp --max-message and --idle, and shell --lifetime, read units as --memory and --timeout do",
          "[endings][flags]") {
  // "1m" once was a silent 1 byte (--max-message) or 1 second (--idle, --lifetime).
  struct refusal {
    std::vector<std::string> args;
    const char* says;
  };
  for (auto& [args, says] : {refusal{{"mcp", "--max-message", "4q"}, "needs a size such as 4m"},
                             refusal{{"mcp", "--max-message", "0"}, "needs a size such as 4m"},
                             refusal{{"mcp", "--idle", "5x"}, "unknown unit 'x'"},
                             refusal{{"shell", "--lifetime", "5x"}, "unknown unit 'x'"}}) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--", "/bin/echo", "ran"});
    auto r = run_to_end(full, 20s);
    INFO(args[0] << " " << args[1] << " " << args[2] << ": " << r.err);
    CHECK(r.status == 125);
    CHECK(r.out.find("ran") == std::string::npos);
    CHECK(r.err.find(says) != std::string::npos);
  }
  // Accepted with units: a 1m message cap relays a 2000-byte line, where 1 byte would not.
  auto r = run_to_end({"mcp", "--max-message", "1m", "--idle", "1m", "--tier", "host", "--allow-host", "--", "/bin/sh",
                       "-c", "head -c 2000 /dev/zero | tr '\\0' x; echo"},
                      30s);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.out.size() == 2001);
}

TEST_CASE("mcp and shell refuse limit flags with --connect, where the daemon's profile applies", "[endings][flags]") {
  for (std::string command : {"mcp", "shell"}) {
    auto r = run_to_end({command, "--connect", "/nonexistent/corral.sock", "--pids", "8", "--", "/bin/echo", "ran"}, 20s);
    INFO(command << ": " << r.err);
    CHECK(r.status == 125);
    CHECK(r.err.find("with --connect the daemon's profile sets the limits") != std::string::npos);
  }
}

TEST_CASE("a profile below a floor is refused at load, naming the floor", "[endings][flags]") {
  temp_dir dir;
  for (const char* body : {"memory = \"512k\"", "tmp_size = \"4k\"", "shm_size = 1000", "scratch_size = \"1k\"",
                           "cpu = 0.001"}) {
    {
      std::ofstream f(dir / "corral.toml");
      f << "[sandbox.limits]\n" << body << "\n";
    }
    auto r = run_to_end({"run", "--config", dir / "corral.toml", "--", "/bin/true"}, 20s);
    INFO(body << ": " << r.err);
    CHECK(r.status == 125);
    CHECK(r.err.find("sandbox.limits.") != std::string::npos);
    CHECK(r.err.find("floor") != std::string::npos);
  }
}

TEST_CASE("timeouts of 500ms, 1s and 5m work, and widening names the key that allows it", "[endings][flags][timeout]") {
  for (auto [flag, bound] : {std::pair{"500ms", 10s}, std::pair{"1s", 10s}}) {
    auto start = std::chrono::steady_clock::now();
    auto r = run_to_end({"run", "--tier", "host", "--allow-host", "--timeout", flag, "--", "sleep", "20"}, 30s);
    INFO(flag << ": " << r.err);
    CHECK(r.status == 124);
    CHECK(std::chrono::steady_clock::now() - start < bound);
    CHECK(r.err.find("corral: timed out after") != std::string::npos);
  }
  auto widened = run_to_end({"run", "--tier", "host", "--allow-host", "--timeout", "5m", "--", "/bin/true"}, 20s);
  CHECK(widened.status == 125);
  CHECK(widened.err.find("raise timeout under [sandbox.limits]") != std::string::npos);
  auto fits = run_to_end({"run", "--tier", "host", "--allow-host", "--timeout", "0.5m", "--", "/bin/true"}, 20s);
  CHECK(fits.status == 0);
}

TEST_CASE("with no profile, describe shows the default limits", "[endings][defaults]") {
  auto r = run_to_end({"describe"}, 20s);
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out.substr(0, r.out.rfind('}') + 1));
  CHECK(j["limits"]["memory_bytes"] == default_memory_bytes());
  CHECK(j["limits"]["memory_bytes"] <= 1024 * kMiB);
  CHECK(j["limits"]["pids"] == 512);
  CHECK(j["limits"]["timeout_ms"] == 30'000);
  CHECK(j["limits"]["output_cap_bytes"] == kMiB);
  CHECK(j["limits"]["tmp_bytes"] == 256 * kMiB);
  CHECK(j["limits"]["shm_bytes"] == 64 * kMiB);
  CHECK(j["limits"]["scratch_bytes"] == 512 * kMiB);
}

TEST_CASE("with no profile, a fork bomb meets the pids default and says so", "[endings][defaults][landlock]") {
  REQUIRE_LANDLOCK();
  auto token = unique_sleep();
  // 2000 sleepers: the fork that fails ends the shell; the lease kills the rest.
  auto r = run_to_end({"run", "--json", "--", "sh", "-c",
                       "i=0; while [ $i -lt 2000 ]; do sleep " + token + " & i=$((i+1)); done; echo all-forked"});
  INFO(r.err);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["verdict"] == "pids_limit");
  CHECK(j["stdout"].get<std::string>().find("all-forked") == std::string::npos);
  CHECK(r.err.find("corral: the pids limit of 512 processes was reached") != std::string::npos);
  CHECK(processes_with(token).empty());
}

TEST_CASE("with no profile, a 4 GiB allocation meets the memory default and says so", "[endings][defaults][landlock]") {
  REQUIRE_LANDLOCK();
  auto r = run_to_end({"run", "--", "python3", "-c", "s = b'x' * (4 << 30); print('allocated')"});
  INFO(r.err);
  CHECK(r.status == 128 + SIGKILL);
  CHECK(r.out.find("allocated") == std::string::npos);
  auto limit = default_memory_bytes();
  std::string size = limit % (1024 * kMiB) == 0 ? std::to_string(limit / (1024 * kMiB)) + " GiB"
                                                 : std::to_string(limit / kMiB) + " MiB";
  CHECK(r.err.find("corral: out of memory: the memory limit of " + size + " was reached") != std::string::npos);
}

TEST_CASE("with no profile, 4 GiB written into /work, /tmp or /dev/shm stops at its bound, off the host's disk",
          "[endings][defaults][landlock]") {
  REQUIRE_LANDLOCK();
  struct target {
    const char* dir;
    std::uint64_t bound;
  };
  for (auto [dir, bound] : {target{"/work", 512 * kMiB}, target{"/tmp", 256 * kMiB}, target{"/dev/shm", 64 * kMiB}}) {
    INFO(dir);
    struct statvfs before {};
    REQUIRE(::statvfs("/run", &before) == 0);
    temp_dir cwd{"corral-endings-cwd-"};
    std::string file = std::string(dir) + "/fill";
    // The program reports how far it got and then waits, so the filled file still exists
    // while the host's disk is measured.
    cli_child c({"run", "--", "sh", "-c",
                 "head -c 4G /dev/zero > " + file + "; echo status=$? size=$(wc -c < " + file + "); sleep 20"},
                cwd.path());
    auto line = c.first_line(60s);
    REQUIRE_FALSE(line.empty());
    struct statvfs during {};
    REQUIRE(::statvfs("/run", &during) == 0);
    c.signal(SIGTERM);
    CHECK(c.finish() == 128 + SIGTERM);
    INFO(line << c.err);
    CHECK(line == "status=1 size=" + std::to_string(bound) + "\n");
    CHECK(c.err.find("No space left on device") != std::string::npos);
    // Whatever else this machine writes meanwhile, 4 GiB on its disk would show.
    auto used = static_cast<double>(before.f_bavail) - static_cast<double>(during.f_bavail);
    CHECK(used * static_cast<double>(before.f_frsize) < 1024.0 * kMiB);
  }
}

TEST_CASE("a program that fails on a full tmpfs gets a line naming the bounds", "[endings][defaults][landlock]") {
  REQUIRE_LANDLOCK();
  auto r = run_to_end({"run", "--", "sh", "-c", "head -c 4G /dev/zero > /dev/shm/fill"});
  CHECK(r.status == 1);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  CHECK(r.err.find("corral: a write failed for want of space: /work holds at most 512 MiB, /tmp 256 MiB and "
                   "/dev/shm 64 MiB") != std::string::npos);
}

TEST_CASE("what a program writes into its /tmp counts against its memory limit", "[endings][defaults][landlock]") {
  REQUIRE_LANDLOCK();
  // 200 MiB fits /tmp's 256 MiB but not a 64 MiB memory limit: tmpfs pages are charged to
  // the memory cgroup of the writer.
  auto r = run_to_end({"run", "--json", "--memory", "64m", "--", "sh", "-c",
                       "head -c 200M /dev/zero > /tmp/f; echo status=$?"});
  INFO(r.out << r.err);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["verdict"] == "out_of_memory");
  CHECK(j["usage"]["peak_memory_bytes"] <= 64 * kMiB);
  CHECK(r.err.find("corral: out of memory: the memory limit of 64 MiB was reached") != std::string::npos);
}

TEST_CASE("output streams to a pipe while the program still runs, each stream to its own", "[endings][stream]") {
  temp_dir cwd{"corral-endings-cwd-"};
  cli_child c({"run", "--tier", "host", "--allow-host", "--", "sh", "-c", "echo first; echo to-err >&2; sleep 20"},
              cwd.path());
  auto start = std::chrono::steady_clock::now();
  CHECK(c.first_line(15s) == "first\n");
  CHECK(std::chrono::steady_clock::now() - start < 15s);
  CHECK(c.still_running_after(300ms));  // the program is still asleep
  CHECK(c.err.find("to-err") != std::string::npos);
  CHECK(c.out.find("to-err") == std::string::npos);
  c.signal(SIGTERM);
  CHECK(c.finish() == 143);
}

TEST_CASE("SIGTERM, SIGINT and SIGHUP to corral run end the program, print what came, leave nothing, exit 128+N",
          "[endings][signals][landlock]") {
  REQUIRE_LANDLOCK();
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    INFO(sig);
    auto token = unique_sleep();
    temp_dir cwd{"corral-endings-cwd-"};
    cli_child c({"run", "-v", "--", "sh", "-c", "echo ran; sleep " + token}, cwd.path());
    REQUIRE(c.first_line(30s) == "ran\n");
    REQUIRE(sleeping_soon(token));  // the attempt: it is running now
    c.signal(sig);
    CHECK(c.finish(30s) == 128 + sig);
    CHECK(c.out == "ran\n");
    CHECK(c.err.find(std::string("corral: got SIG")) != std::string::npos);
    auto id = execution_id(c.err);
    REQUIRE_FALSE(id.empty());
    CHECK(cgroups_left(id).empty());
    CHECK_FALSE(fs::exists("/run/corral/leases/" + id + ".lease"));
    CHECK(processes_with(token).empty());
  }
}

TEST_CASE("a second SIGINT kills at once where the first waits for the grace", "[endings][signals][landlock]") {
  REQUIRE_LANDLOCK();
  temp_dir dir;
  {
    std::ofstream f(dir / "corral.toml");
    f << "[sandbox.limits]\nkill_grace = 20\n";
  }
  auto token = unique_sleep();
  temp_dir cwd{"corral-endings-cwd-"};
  // Ignoring SIGTERM is inherited by the sleep: only SIGKILL ends them.
  cli_child c({"run", "--config", dir / "corral.toml", "--", "sh", "-c", "trap '' TERM; echo ran; sleep " + token},
              cwd.path());
  REQUIRE(c.first_line(30s) == "ran\n");
  c.signal(SIGINT);
  CHECK(c.still_running_after(1500ms));  // the grace holds
  auto start = std::chrono::steady_clock::now();
  c.signal(SIGINT);
  CHECK(c.finish(15s) == 130);
  CHECK(std::chrono::steady_clock::now() - start < 10s);
  CHECK(processes_with(token).empty());
}

TEST_CASE("SIGTERM to corral mcp and corral shell ends the session and says so", "[endings][signals][landlock]") {
  REQUIRE_LANDLOCK();
  for (std::string command : {"mcp", "shell"}) {
    INFO(command);
    auto token = unique_sleep();
    temp_dir cwd{"corral-endings-cwd-"};
    cli_child c({command, "--", "sh", "-c", "echo ready >&2; sleep " + token}, cwd.path(), command == "mcp");
    REQUIRE(sleeping_soon(token));
    c.signal(SIGTERM);
    CHECK(c.finish(30s) == 143);
    CHECK(c.err.find("corral: got SIGTERM; the " + std::string(command == "mcp" ? "server" : "terminal") +
                     " was ended") != std::string::npos);
    CHECK(processes_with(token).empty());
  }
}

TEST_CASE("a second SIGINT to corral mcp and corral shell kills at once where the first waits for the grace",
          "[endings][signals][landlock]") {
  REQUIRE_LANDLOCK();
  temp_dir dir;
  {
    std::ofstream f(dir / "corral.toml");
    f << "[sandbox.limits]\nkill_grace = 20\n";
  }
  for (std::string command : {"mcp", "shell"}) {
    INFO(command);
    auto token = unique_sleep();
    temp_dir cwd{"corral-endings-cwd-"};
    // Ignoring SIGTERM is inherited by the sleep: only SIGKILL ends them.
    cli_child c({command, "--config", dir / "corral.toml", "--", "sh", "-c", "trap '' TERM; sleep " + token},
                cwd.path(), command == "mcp");
    REQUIRE(sleeping_soon(token));
    c.signal(SIGINT);
    CHECK(c.still_running_after(1500ms));  // the grace holds
    auto start = std::chrono::steady_clock::now();
    c.signal(SIGINT);
    CHECK(c.finish(15s) == 130);
    CHECK(std::chrono::steady_clock::now() - start < 10s);  // well inside the 20 s grace
    CHECK(processes_with(token).empty());
  }
}

TEST_CASE("a file that is found but not executable exits 126", "[endings][exit]") {
  temp_dir dir;
  auto script = dir / "not-executable.sh";
  {
    std::ofstream f(script);
    f << "#!/bin/sh\necho ran\n";
  }
  ::chmod(script.c_str(), 0644);
  auto r = run_to_end({"run", "--tier", "host", "--allow-host", "--", script}, 20s);
  INFO(r.err);
  CHECK(r.status == 126);
  CHECK(r.out.empty());
  CHECK(r.err.find("not-executable.sh") != std::string::npos);
}

TEST_CASE("a program killed by a signal says which on stderr", "[endings][exit]") {
  auto r = run_to_end({"run", "--tier", "host", "--allow-host", "--", "sh", "-c", "kill -SEGV $$"}, 20s);
  CHECK(r.status == 128 + SIGSEGV);
  CHECK(r.err.find("corral: the program was killed by signal 11 (SIGSEGV)") != std::string::npos);
}

TEST_CASE("a compile error says so on stderr", "[endings][exit]") {
  auto r = run_to_end({"run", "--tier", "host", "--allow-host", "--lang", "c", "--code", "int main( {"}, 60s);
  if (r.err.find("not found") != std::string::npos) {
    WARN("skipped: no C compiler: " << r.err);
    return;
  }
  CHECK(r.status != 0);
  CHECK(r.err.find("corral: compile error") != std::string::npos);
}

TEST_CASE("shell says when its lifetime ended it, and exits 124", "[endings][exit][landlock]") {
  REQUIRE_LANDLOCK();
  auto start = std::chrono::steady_clock::now();
  auto r = run_to_end({"shell", "--lifetime", "1", "--", "sleep", "30"}, 30s);
  INFO(r.err);
  CHECK(r.status == 124);
  CHECK(std::chrono::steady_clock::now() - start < 20s);
  CHECK(r.err.find("corral: the terminal's lifetime of 1 s was reached") != std::string::npos);
}
