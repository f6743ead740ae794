// The `corral run` binary, driven as a user drives it: exit statuses, refusals, JSON, the
// program sources, stdin, and what reaches the child's environment and our stdout.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <optional>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "runtime_fixture.hpp"
#include "served_daemon.hpp"

extern char** environ;

using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

struct cli_outcome {
  int exit_status = -1;  // the exit code, or 128+N for signal N (as a shell reports it)
  std::string out;
  std::string err;
  bool overran = false;  // killed by us at the bound: corral itself hung
};

// Our own environment without the host-tier switches (a test sets them explicitly), plus `extra`.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto name = kv.substr(0, kv.find('='));
    if (name == "CORRAL_ALLOW_HOST" || name == "CORRAL_PRODUCTION" || name == "CORRAL_CONNECT" || extra.count(name))
      continue;
    env.push_back(kv);
  }
  for (auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Runs the CLI with `args` in `cwd` (so no stray ./corral.toml applies), stdin from
// /dev/null, both outputs drained concurrently; SIGKILLs it if it outlives `bound`.
cli_outcome run_cli(std::vector<std::string> args, const std::map<std::string, std::string>& extra_env = {},
                    std::chrono::milliseconds bound = 60s) {
  temp_dir cwd{"corral-cli-cwd-"};
  args.insert(args.begin(), CORRAL_TEST_CLI);
  auto env = child_environment(extra_env);
  auto argv = c_strings(args);
  auto envp = c_strings(env);

  int out_pipe[2], err_pipe[2];
  REQUIRE(::pipe2(out_pipe, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err_pipe, O_CLOEXEC) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_addchdir_np(&fa, cwd.path().c_str());
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    FAIL("posix_spawn " << argv[0] << ": " << std::strerror(rc));
  }

  cli_outcome o;
  auto deadline = std::chrono::steady_clock::now() + bound;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&o.out, &o.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= 0ms) {
      o.overran = true;
      ::kill(pid, SIGKILL);
      break;
    }
    if (::poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[k].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[k]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[k].fd);
        fds[k].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  o.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return o;
}

// `corral run --tier host --allow-host ARGS...`: the host tier explicitly, never the default.
cli_outcome run_host(std::vector<std::string> args, const std::map<std::string, std::string>& extra_env = {}) {
  args.insert(args.begin(), {"run", "--tier", "host", "--allow-host"});
  return run_cli(std::move(args), extra_env);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  REQUIRE(f.good());
}

} // namespace

TEST_CASE("corral run exits with the child's own exit status", "[cli]") {
  auto code = GENERATE(0, 1, 7, 42);
  auto r = run_host({"--", "sh", "-c", "exit " + std::to_string(code)});
  CHECK_FALSE(r.overran);
  CHECK(r.exit_status == code);
  CHECK(r.out.empty());
}

TEST_CASE("corral run reports a child ended by signal N as 128+N", "[cli]") {
  auto sig = GENERATE(SIGTERM, SIGKILL, SIGSEGV);
  auto r = run_host({"--", "sh", "-c", "kill -" + std::to_string(sig) + " $$"});
  CHECK_FALSE(r.overran);
  CHECK(r.exit_status == 128 + sig);
}

TEST_CASE("corral run exits 124 on timeout and still prints what came before", "[cli][timeout]") {
  auto start = std::chrono::steady_clock::now();
  auto r = run_host({"--timeout", "0.5", "--", "sh", "-c", "echo before; echo err-before >&2; sleep 30; echo after"});
  CHECK_FALSE(r.overran);
  CHECK(r.exit_status == 124);
  CHECK(r.out == "before\n");
  CHECK(r.err.find("err-before\n") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < 15s);
}

TEST_CASE("corral run refuses the host tier with 125 and says why", "[cli][policy]") {
  SECTION("without the opt-in") {
    auto r = run_cli({"run", "--tier", "host", "--", "/bin/echo", "ran"});
    CHECK(r.exit_status == 125);
    CHECK(r.out.empty());
    CHECK(r.err.find("CORRAL_ALLOW_HOST") != std::string::npos);
    CHECK(r.err.find("--allow-host") != std::string::npos);
  }
  SECTION("with CORRAL_ALLOW_HOST=1 instead of the flag it runs") {
    auto r = run_cli({"run", "--tier", "host", "--", "/bin/echo", "ran"}, {{"CORRAL_ALLOW_HOST", "1"}});
    CHECK(r.exit_status == 0);
    CHECK(r.out == "ran\n");
  }
  SECTION("in production mode, even with --allow-host and CORRAL_ALLOW_HOST=1") {
    auto r = run_host({"--", "/bin/echo", "ran"}, {{"CORRAL_PRODUCTION", "1"}, {"CORRAL_ALLOW_HOST", "1"}});
    CHECK(r.exit_status == 125);
    CHECK(r.out.empty());
    CHECK(r.err.find("production") != std::string::npos);
    CHECK(r.err.find("CORRAL_PRODUCTION") != std::string::npos);
  }
}

TEST_CASE("corral run rejects an unknown option with 125 and the usage", "[cli]") {
  auto r = run_cli({"run", "--no-such-option", "--", "/bin/echo", "ran"});
  CHECK(r.exit_status == 125);
  CHECK(r.out.empty());
  CHECK(r.err.find("unknown option --no-such-option") != std::string::npos);
  CHECK(r.err.find("usage: corral run") != std::string::npos);
}

TEST_CASE("the connect commands refuse --config and --allow-host rather than ignore them", "[cli]") {
  // No daemon is needed: the refusal comes before any connection.
  for (std::string command : {"run", "shell", "mcp"}) {
    for (std::vector<std::string> local : {std::vector<std::string>{"--config", "/nonexistent/corral.toml"},
                                           std::vector<std::string>{"--allow-host"}}) {
      std::vector<std::string> args{command, "--connect", "/nonexistent/corral.sock"};
      args.insert(args.end(), local.begin(), local.end());
      args.insert(args.end(), {"--", "/bin/echo", "ran"});
      auto r = run_cli(args);
      INFO(command << " " << local.front() << ": " << r.err);
      CHECK(r.exit_status == 125);
      CHECK(r.out.find("ran") == std::string::npos);
      CHECK(r.err.find(local.front() + " has no effect with --connect") != std::string::npos);
    }
  }
}

TEST_CASE("corral run --help prints the usage on stdout and exits 0", "[cli]") {
  auto r = run_cli({"run", "--help"});
  CHECK(r.exit_status == 0);
  CHECK(r.out.find("usage: corral run") != std::string::npos);
  CHECK(r.out.find("exit status") != std::string::npos);
}

TEST_CASE("corral run exits 127 when the program does not exist", "[cli]") {
  auto r = run_host({"--", "corral-no-such-program-xyz"});
  CHECK(r.exit_status == 127);
  CHECK(r.out.empty());
  CHECK(r.err.find("corral-no-such-program-xyz") != std::string::npos);
}

TEST_CASE("corral run --json prints the whole result as one JSON object", "[cli][json]") {
  SECTION("a normal exit") {
    auto r = run_host({"--json", "--memory", "64m", "--", "sh", "-c", "echo hi; echo oops >&2; exit 3"});
    CHECK(r.exit_status == 3);
    auto j = nlohmann::json::parse(r.out);  // throws (and fails) on anything but one object
    REQUIRE(j.is_object());
    CHECK(j["exit_code"] == 3);
    CHECK(j["signal"].is_null());
    CHECK(j["stdout"] == "hi\n");
    CHECK(j["stderr"] == "oops\n");
    CHECK(j["stdout_truncated"] == false);
    CHECK(j["stdout_dropped_bytes"] == 0);
    CHECK(j["timed_out"] == false);
    CHECK(j["verdict"] == "exited");
    CHECK(j["tier"] == "host");
    CHECK(j["isolation"].get<std::string>().find("no filesystem") != std::string::npos);
    REQUIRE(j["not_enforced"].is_array());
    auto ne = j["not_enforced"].get<std::vector<std::string>>();
    CHECK(std::find(ne.begin(), ne.end(), "memory_limit") != ne.end());
    CHECK(j["duration_ms"].is_number());
    CHECK(j["execution_id"].is_string());
    CHECK_FALSE(j.contains("stdout_base64"));
    // In JSON mode the child's stderr is in the object, not on ours.
    CHECK(r.err.empty());
  }
  SECTION("a timeout") {
    auto r = run_host({"--json", "--timeout", "0.3", "--", "sh", "-c", "echo partial; sleep 30"});
    CHECK(r.exit_status == 124);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["verdict"] == "timed_out");
    CHECK(j["timed_out"] == true);
    CHECK(j["stdout"] == "partial\n");
  }
  SECTION("a signal") {
    auto r = run_host({"--json", "--", "sh", "-c", "kill -KILL $$"});
    CHECK(r.exit_status == 128 + SIGKILL);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["verdict"] == "signaled");
    CHECK(j["signal"] == SIGKILL);
    CHECK(j["exit_code"].is_null());
  }
  SECTION("a refusal is a JSON error object too") {
    auto r = run_cli({"run", "--json", "--tier", "host", "--", "/bin/true"});
    CHECK(r.exit_status == 125);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["error"]["kind"].is_string());
    CHECK(j["error"]["message"].get<std::string>().find("CORRAL_ALLOW_HOST") != std::string::npos);
  }
}

TEST_CASE("corral run --json carries invalid UTF-8 output as base64, byte for byte", "[cli][json]") {
  auto r = run_host({"--json", "--", "printf", "a\\377\\376b"});
  CHECK(r.exit_status == 0);
  auto j = nlohmann::json::parse(r.out);  // nlohmann refuses to dump invalid UTF-8: this parses only if it was repaired
  REQUIRE(j.contains("stdout_base64"));
  CHECK(j["stdout_base64"] == "Yf/+Yg==");  // 61 ff fe 62
  CHECK(j["stdout"] == "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");
  CHECK_FALSE(j.contains("stderr_base64"));
}

TEST_CASE("corral run --lang python --code runs the snippet", "[cli][lang]") {
  auto r = run_host({"--lang", "python", "--code", "print(6*7)"});
  CHECK(r.exit_status == 0);
  CHECK(r.out == "42\n");
}

TEST_CASE("corral run --file reads the program text from a file", "[cli][lang]") {
  temp_dir dir;
  SECTION("python, with arguments after --") {
    write_text(dir / "prog.py", "import sys\nprint('args', sys.argv[1:])\nsys.exit(5)\n");
    auto r = run_host({"--lang", "python", "--file", dir / "prog.py", "--", "x", "y z"});
    CHECK(r.exit_status == 5);
    CHECK(r.out == "args ['x', 'y z']\n");
  }
  SECTION("a shell command") {
    write_text(dir / "prog.sh", "echo from-file\n");
    auto r = run_host({"--lang", "command", "--file", dir / "prog.sh"});
    CHECK(r.exit_status == 0);
    CHECK(r.out == "from-file\n");
  }
  SECTION("a file that cannot be read is refused") {
    auto r = run_host({"--lang", "python", "--file", dir / "missing.py"});
    CHECK(r.exit_status == 125);
    CHECK(r.err.find("missing.py") != std::string::npos);
  }
}

TEST_CASE("corral run --stdin feeds a file to the child's stdin", "[cli][stdin]") {
  temp_dir dir;
  std::string input = "line one\nline two\n";
  input += std::string(300 * 1024, 'z');  // larger than a pipe buffer
  write_text(dir / "input", input);
  auto r = run_host({"--stdin", dir / "input", "--", "cat"});
  CHECK(r.exit_status == 0);
  CHECK(r.out.size() == input.size());
  CHECK(r.out == input);
}

TEST_CASE("corral's own environment does not reach the child", "[cli][env]") {
  // The opt-in comes from the environment here, so it must not leak either.
  auto r = run_cli({"run", "--tier", "host", "--env", "GIVEN=yes", "--", "env"},
                   {{"CORRAL_TEST_SECRET", "hunter2"}, {"CORRAL_ALLOW_HOST", "1"}});
  CHECK(r.exit_status == 0);
  CHECK(r.out.find("hunter2") == std::string::npos);
  CHECK(r.out.find("CORRAL_TEST_SECRET") == std::string::npos);
  CHECK(r.out.find("CORRAL_ALLOW_HOST") == std::string::npos);
  CHECK(r.out.find("HOME=") == std::string::npos);
  CHECK(r.out == "GIVEN=yes\n");
}

TEST_CASE("corral prints nothing on stdout besides the child's output", "[cli]") {
  SECTION("a silent program") {
    auto r = run_host({"--", "/bin/true"});
    CHECK(r.exit_status == 0);
    CHECK(r.out.empty());
    CHECK(r.err.empty());
  }
  SECTION("with debug logging on, the logs go to stderr") {
    auto r = run_host({"-v", "--memory", "64m", "--", "printf", "exact"});
    CHECK(r.exit_status == 0);
    CHECK(r.out == "exact");
    CHECK_FALSE(r.err.empty());
  }
  SECTION("a failing program's stderr stays on stderr") {
    auto r = run_host({"--", "sh", "-c", "printf out; printf err >&2; exit 2"});
    CHECK(r.exit_status == 2);
    CHECK(r.out == "out");
    CHECK(r.err == "err");
  }
}

TEST_CASE("corral run keeps exactly the cap and says what it dropped on stderr, in-process and through the daemon", "[cli][daemon]") {
  served_daemon d;  // --allow-host
  std::vector<std::string> prog{"--output-cap", "1000", "--", "/bin/sh", "-c",
                                "head -c 5000 /dev/zero | tr \"\\000\" a; head -c 3000 /dev/zero | tr \"\\000\" b >&2; exit 4"};
  auto in_process = run_host(prog);
  auto args = prog;
  args.insert(args.begin(), {"run", "--tier", "host", "--connect", d.socket});  // the daemon holds the opt-in
  auto via_daemon = run_cli(args);
  CHECK(in_process.exit_status == 4);
  CHECK(in_process.out == std::string(1000, 'a'));
  CHECK(in_process.err == std::string(1000, 'b') +
                              "corral: stdout truncated at 1000 bytes; 4000 bytes dropped (--output-cap, or output_cap "
                              "under [sandbox.limits])\n"
                              "corral: stderr truncated at 1000 bytes; 2000 bytes dropped (--output-cap, or output_cap "
                              "under [sandbox.limits])\n");
  CHECK(via_daemon.exit_status == 4);
  CHECK(via_daemon.out == in_process.out);
  CHECK(via_daemon.err == std::string(1000, 'b') + "corral: stdout truncated; 4000 bytes dropped (the daemon's output cap)\n" +
                              "corral: stderr truncated; 2000 bytes dropped (the daemon's output cap)\n");
}

TEST_CASE("CORRAL_CONNECT runs corral run through that daemon, and never in-process instead", "[cli][daemon]") {
  served_daemon d;  // --allow-host: the daemon holds the host opt-in, the CLI gives none
  auto via = run_cli({"run", "--tier", "host", "--", "/bin/sh", "-c", "echo through; echo err >&2; exit 3"},
                     {{"CORRAL_CONNECT", d.socket}});
  INFO(via.err);
  // In-process, --tier host without --allow-host is refused (125): it ran in the daemon.
  CHECK(via.exit_status == 3);
  CHECK(via.out == "through\n");
  CHECK(via.err == "err\n");

  // What only applies in-process is refused, naming the variable, and nothing runs.
  auto local = run_cli({"run", "--allow-host", "--", "/bin/echo", "ran"}, {{"CORRAL_CONNECT", d.socket}});
  CHECK(local.exit_status == 125);
  CHECK(local.out.empty());
  CHECK_THAT(local.err, Catch::Contains("--allow-host has no effect with --connect"));
  CHECK_THAT(local.err, Catch::Contains("CORRAL_CONNECT is set"));

  // A daemon that is not there is an error that names it, not a run in-process.
  auto gone = run_cli({"run", "--", "/bin/echo", "ran"}, {{"CORRAL_CONNECT", "/nonexistent/corral.sock"}});
  CHECK(gone.exit_status == 125);
  CHECK(gone.out.empty());
  CHECK_THAT(gone.err, Catch::Contains("/nonexistent/corral.sock"));

  // An empty value is no choice: in-process, as without it.
  auto unset = run_cli({"run", "--tier", "host", "--allow-host", "--", "/bin/echo", "here"}, {{"CORRAL_CONNECT", ""}});
  CHECK(unset.exit_status == 0);
  CHECK(unset.out == "here\n");
}

TEST_CASE("corral workspace creates, runs in, copies both ways, lists, diffs and removes through the daemon", "[workspace][cli]") {
  served_daemon d(std::vector<std::string>{});
  auto ws = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "workspace");
    args.insert(args.begin() + 2, {"--connect", d.socket});
    auto r = run_cli(args);
    CHECK_FALSE(r.overran);
    return r;
  };
  auto made = ws({"create", "cli-ws", "--idle", "10m"});
  INFO(made.err);
  REQUIRE(made.exit_status == 0);
  CHECK(made.out.rfind("w-", 0) == 0);
  CHECK(made.out.size() == 15);  // "w-" + 12 hex + newline

  // exec: `corral run`'s output and exit status; the file it left stays for the next.
  auto ran = ws({"exec", "cli-ws", "--", "sh", "-c", "echo made > made.txt; echo out; echo err >&2; exit 3"});
  CHECK(ran.exit_status == 3);
  CHECK(ran.out == "out\n");
  CHECK(ran.err.find("err\n") != std::string::npos);
  CHECK(ws({"exec", "cli-ws", "--", "cat", "/work/made.txt"}).out == "made\n");
  // --cwd travels with the request: relative to /work; one that cannot be entered is 125.
  REQUIRE(ws({"exec", "cli-ws", "--", "mkdir", "-p", "sub/dir"}).exit_status == 0);
  CHECK(ws({"exec", "cli-ws", "--cwd", "sub/dir", "--", "pwd"}).out == "/work/sub/dir\n");
  auto lost = ws({"exec", "cli-ws", "--cwd", "/no/such/dir", "--", "pwd"});
  CHECK(lost.exit_status == 125);
  CHECK_THAT(lost.err, Catch::Contains("cannot enter /no/such/dir"));
  REQUIRE(ws({"exec", "cli-ws", "--", "rm", "-r", "sub"}).exit_status == 0);

  // cp in and out, larger than one call carries (4 MiB), bytes of every value.
  temp_dir local{"corral-cli-ws-"};
  std::string big;
  for (std::size_t i = 0; i < (5u << 20); ++i) big += static_cast<char>((i * 7919) >> 3);
  write_text(local / "in.bin", big);
  REQUIRE(ws({"cp", local / "in.bin", "cli-ws:in.bin"}).exit_status == 0);
  REQUIRE(ws({"cp", "cli-ws:/work/in.bin", local / "out.bin"}).exit_status == 0);
  std::ifstream back(local / "out.bin", std::ios::binary);
  std::string copied((std::istreambuf_iterator<char>(back)), std::istreambuf_iterator<char>());
  CHECK(copied.size() == big.size());
  CHECK(copied == big);
  // Exactly one piece, and nothing: the piece boundary and the empty file.
  for (std::size_t size : {std::size_t{4} << 20, std::size_t{0}}) {
    write_text(local / "edge.bin", big.substr(0, size));
    REQUIRE(ws({"cp", local / "edge.bin", "cli-ws:edge.bin"}).exit_status == 0);
    CHECK(ws({"exec", "cli-ws", "--", "sh", "-c", "wc -c < /work/edge.bin"}).out == std::to_string(size) + "\n");
  }
  REQUIRE(ws({"exec", "cli-ws", "--", "rm", "/work/edge.bin"}).exit_status == 0);
  auto both = ws({"cp", local / "in.bin", local / "x"});
  CHECK(both.exit_status == 125);
  CHECK(both.err.find("exactly one side is W:PATH") != std::string::npos);

  auto files = ws({"files", "cli-ws"});
  CHECK(files.exit_status == 0);
  CHECK(files.out.find("/work/in.bin") != std::string::npos);
  CHECK(files.out.find(std::to_string(big.size())) != std::string::npos);
  auto changes = ws({"changes", "cli-ws"});
  CHECK(changes.out == "A /work/in.bin\nA /work/made.txt\n");
  auto listed = ws({"ls"});
  CHECK(listed.out.find("cli-ws") != std::string::npos);

  auto changed = ws({"exec", "cli-ws", "--changes", "--", "sh", "-c", "echo x > c.txt; rm made.txt"});
  CHECK(changed.exit_status == 0);
  CHECK(changed.err.find("A /work/c.txt\nD /work/made.txt\n") != std::string::npos);
  CHECK(ws({"rm", "cli-ws"}).exit_status == 0);
  auto gone = ws({"exec", "cli-ws", "--", "true"});
  CHECK(gone.exit_status == 125);
  CHECK(gone.err.find("no workspace 'cli-ws' here") != std::string::npos);
}

TEST_CASE("corral workspace without a daemon, and run --workspace without --connect, say what to start", "[workspace][cli]") {
  auto r = run_cli({"workspace", "ls", "--connect", "/nonexistent/corral.sock"});
  CHECK(r.exit_status == 125);
  CHECK(r.err.find("corral serve") != std::string::npos);
  auto local = run_cli({"run", "--workspace", "w", "--", "true"});
  CHECK(local.exit_status == 125);
  CHECK(local.err.find("--workspace needs --connect") != std::string::npos);
  auto shell = run_cli({"shell", "--workspace", "w", "--", "true"});
  CHECK(shell.exit_status == 125);
  CHECK(shell.err.find("--workspace needs --connect") != std::string::npos);
  auto verb = run_cli({"workspace", "frobnicate"});
  CHECK(verb.exit_status == 125);
  CHECK(verb.err.find("unknown verb 'frobnicate'") != std::string::npos);
}
