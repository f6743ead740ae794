// One-shot executions on the host tier, end to end through the public API.
#include <algorithm>
#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

long read_pid(const std::string& path) {
  std::ifstream in(path);
  long pid = 0;
  in >> pid;
  return pid;
}

bool alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH); }

} // namespace

TEST_CASE("a command runs and its output, exit code and verdict come back", "[host][exec]") {
  test_runtime t;
  auto r = t.run(shell("echo hello; echo oops >&2; exit 3"));
  REQUIRE(r);
  CHECK(r->out.data == "hello\n");
  CHECK(r->err.data == "oops\n");
  CHECK(r->exit_code == 3);
  CHECK_FALSE(r->term_signal);
  CHECK(r->how == verdict::exited);
  CHECK(r->tier == "host");
  CHECK_FALSE(r->timed_out);
  CHECK(r->isolation.find("no filesystem") != std::string::npos);
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("the result says where the time went, the runtime's phases around the helper's", "[host][exec]") {
  test_runtime t;
  auto r = t.run(shell("exit 0"));
  REQUIRE(r);
  std::vector<std::string> names;
  for (auto& s : r->steps) names.push_back(s.name);
  REQUIRE(names.size() >= 4);
  CHECK(names.front() == "lease");
  CHECK(names[1] == "spawn");
  CHECK(std::find(names.begin(), names.end(), "spec") != names.end());  // the helper's own
  CHECK(names.back() == "lease_finish");
}

TEST_CASE("a program killed by a signal is reported as signaled, not exited", "[host][exec]") {
  test_runtime t;
  auto r = t.run(shell("kill -SEGV $$"));
  REQUIRE(r);
  CHECK(r->how == verdict::signaled);
  CHECK(r->term_signal == SIGSEGV);
  CHECK_FALSE(r->exit_code);
}

TEST_CASE("argv runs literally, with no shell in between", "[host][exec]") {
  test_runtime t;
  auto r = t.run(program({"/bin/echo", "$HOME", "a b", "*"}));
  REQUIRE(r);
  CHECK(r->out.data == "$HOME a b *\n");
}

TEST_CASE("a bare program name is resolved against the caller's PATH", "[host][exec]") {
  test_runtime t;
  auto r = t.run(program({"echo", "found"}));
  REQUIRE(r);
  CHECK(r->out.data == "found\n");
  auto missing = t.run(program({"corral-no-such-program-xyz"}));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == failure_kind::spawn_failed);
  CHECK(missing.error().message.find("corral-no-such-program-xyz") != std::string::npos);
}

TEST_CASE("the child's environment holds exactly what was given, nothing of the host's", "[host][exec][env]") {
  ::setenv("CORRAL_FAKE_SECRET", "hunter2-do-not-leak", 1);
  profile p = test_runtime::host_profile();
  p.env = {{"POLICY_VAR", "from-policy"}, {"OVERRIDDEN", "policy"}};
  test_runtime t(p);
  exec_request r = program({"/usr/bin/env"});
  r.env = {{"REQUEST_VAR", "from-request"}, {"OVERRIDDEN", "request"}};
  auto res = t.run(r);
  ::unsetenv("CORRAL_FAKE_SECRET");
  REQUIRE(res);
  CHECK(res->out.data == "OVERRIDDEN=request\nPOLICY_VAR=from-policy\nREQUEST_VAR=from-request\n");
  CHECK(res->out.data.find("hunter2") == std::string::npos);
}

TEST_CASE("bad requests are refused with a clear error and nothing runs", "[host][exec][validation]") {
  test_runtime t;
  SECTION("empty argv") {
    auto r = t.run(program({}));
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == failure_kind::invalid_request);
    CHECK(r.error().message.find("argv is empty") != std::string::npos);
  }
  SECTION("NUL byte in an argument") {
    auto r = t.run(program({"/bin/echo", std::string("a\0b", 3)}));
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == failure_kind::invalid_request);
    CHECK(r.error().message.find("argv[1] contains a NUL byte") != std::string::npos);
  }
  SECTION("NUL byte in an environment value") {
    auto req = program({"/bin/true"});
    req.env["X"] = std::string("a\0b", 3);
    auto r = t.run(req);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("environment variable X contains a NUL byte") != std::string::npos);
  }
  SECTION("an environment name with '='") {
    auto req = program({"/bin/true"});
    req.env["A=B"] = "1";
    auto r = t.run(req);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("'A=B'") != std::string::npos);
  }
  SECTION("a non-positive timeout") {
    auto req = program({"/bin/true"});
    req.timeout = 0ms;
    auto r = t.run(req);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == failure_kind::invalid_request);
  }
  SECTION("TypeScript without a runner is not run as JavaScript") {
    exec_request req;
    req.language = "typescript";
    req.code = "const x: number = 1; console.log(x)";
    auto r = t.run(req);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == failure_kind::invalid_request);
    CHECK(r.error().message.find("TypeScript runner") != std::string::npos);
  }
  SECTION("an unknown language") {
    exec_request req;
    req.language = "cobol-77";
    req.code = "x";
    auto r = t.run(req);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("unknown language 'cobol-77'") != std::string::npos);
  }
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("the host tier needs an explicit opt-in and production mode refuses it", "[host][policy]") {
  SECTION("no opt-in") {
    ::unsetenv("CORRAL_ALLOW_HOST");
    test_runtime t(test_runtime::host_profile(), false);
    auto r = t.run(program({"/bin/true"}));
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == failure_kind::refused);
    CHECK(r.error().message.find("CORRAL_ALLOW_HOST") != std::string::npos);
  }
  SECTION("production mode, even with the opt-in") {
    ::setenv("CORRAL_PRODUCTION", "1", 1);
    test_runtime t(test_runtime::host_profile(), true);
    auto r = t.run(program({"/bin/true"}));
    ::unsetenv("CORRAL_PRODUCTION");
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == failure_kind::refused);
    CHECK(r.error().message.find("production") != std::string::npos);
  }
}

TEST_CASE("the timeout ends the program and keeps the output it wrote", "[host][timeout]") {
  test_runtime t;
  auto req = shell("echo before; sleep 30; echo after");
  req.timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  auto r = t.run(req);
  auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(r);
  CHECK(r->how == verdict::timed_out);
  CHECK(r->timed_out);
  CHECK(r->out.data == "before\n");
  CHECK(took < 10s);
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("a program that ignores SIGTERM is killed after the grace", "[host][timeout]") {
  test_runtime t;
  auto req = shell("trap '' TERM; echo ready; while :; do sleep 0.05; done");
  req.timeout = 300ms;
  auto r = t.run(req);
  REQUIRE(r);
  CHECK(r->how == verdict::timed_out);
  CHECK(r->out.data == "ready\n");
  CHECK(r->duration < 10s);
}

TEST_CASE("descendants that leave the process group die with the execution", "[host][descendants]") {
  temp_dir dir;
  auto marker = dir / "marker";
  auto pidfile = dir / "pid";
  // Each variant starts a background process that would touch the marker after 1 s.
  auto variant = GENERATE(as<std::string>{},
                          "setsid sh -c 'echo $$ > PIDFILE; sleep 1; touch MARKER' </dev/null >/dev/null 2>&1 &",
                          "(sh -c 'echo $$ > PIDFILE; sleep 1; touch MARKER' &) </dev/null >/dev/null 2>&1",
                          "nohup sh -c 'echo $$ > PIDFILE; sleep 1; touch MARKER' </dev/null >/dev/null 2>&1 &");
  auto code = variant;
  code.replace(code.find("PIDFILE"), 7, pidfile);
  code.replace(code.find("MARKER"), 6, marker);
  bool on_timeout = GENERATE(false, true);
  test_runtime t;
  // Wait for the pid file so the attempt provably ran before the execution ends.
  // A newline, not ";": two variants end in "&", and "&;" is a syntax error.
  auto req = shell(code + "\nwhile [ ! -s " + pidfile + " ]; do sleep 0.01; done; echo launched" +
                   (on_timeout ? "; sleep 30" : ""));
  req.timeout = on_timeout ? 500ms : 20s;
  auto r = t.run(req);
  REQUIRE(r);
  CHECK(r->out.data == "launched\n");
  CHECK(r->how == (on_timeout ? verdict::timed_out : verdict::exited));
  long pid = read_pid(pidfile);
  REQUIRE(pid > 0);  // the background process existed
  CHECK_FALSE(alive(pid));
  std::this_thread::sleep_for(1500ms);
  CHECK_FALSE(exists(marker));
}

TEST_CASE("large stdin against large output completes without deadlock", "[host][stdin]") {
  test_runtime t;
  // Writes 256 KiB before reading any input: a runtime that wrote all of stdin first
  // would block on a full stdin pipe while the child blocks on a full stdout pipe.
  auto req = shell("head -c 262144 /dev/zero | tr '\\0' a; wc -c");
  req.stdin_data = std::string(512 * 1024, 'x');
  req.timeout = 20s;
  auto r = t.run(req);
  REQUIRE(r);
  CHECK(r->how == verdict::exited);
  REQUIRE(r->out.data.size() > 262144);
  CHECK(r->out.data.substr(262144) == "524288\n");
}

TEST_CASE("a child that never reads stdin is still bounded by the timeout", "[host][stdin]") {
  test_runtime t;
  auto req = shell("sleep 30");
  req.stdin_data = std::string(8 * 1024 * 1024, 'x');
  req.timeout = 400ms;
  auto r = t.run(req);
  REQUIRE(r);
  CHECK(r->how == verdict::timed_out);
}

TEST_CASE("stdin larger than the profile allows is refused before anything runs", "[host][stdin]") {
  profile p = test_runtime::host_profile();
  p.limit.stdin_cap = 1024;
  test_runtime t(p);
  auto req = shell("cat");
  req.stdin_data = std::string(1025, 'x');
  auto r = t.run(req);
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == failure_kind::limit_exceeded);
  CHECK(r.error().message.find("1025") != std::string::npos);
}

TEST_CASE("invalid UTF-8 output comes back byte for byte", "[host][output]") {
  test_runtime t;
  auto r = t.run(shell("printf 'a\\377\\376b'"));
  REQUIRE(r);
  CHECK(r->out.data == std::string("a\xff\xfe" "b"));
}

TEST_CASE("memory limits the host tier cannot hold are reported, not pretended", "[host][honesty]") {
  test_runtime t;
  auto req = program({"/bin/true"});
  req.memory_limit_bytes = 64 * 1024 * 1024;
  auto r = t.run(req);
  REQUIRE(r);
  CHECK(std::find(r->not_enforced.begin(), r->not_enforced.end(), "memory_limit") != r->not_enforced.end());
}

TEST_CASE("many executions at once each get their own result", "[host][concurrency]") {
  test_runtime t;
  std::vector<std::thread> threads;
  std::vector<std::string> outs(12);
  for (int i = 0; i < 12; ++i)
    threads.emplace_back([&, i] {
      auto r = t.run(shell("echo " + std::to_string(i)));
      if (r) outs[i] = r->out.data;
    });
  for (auto& th : threads) th.join();
  for (int i = 0; i < 12; ++i) CHECK(outs[i] == std::to_string(i) + "\n");
}
