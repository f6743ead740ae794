// `corral serve` from outside: a real daemon process on a temp socket, raw JSON-RPC lines,
// and every claim checked where a client (or an operator) would see it.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "proto/jsonrpc/jsonrpc.hpp"
#include "tests/daemon_process.hpp"
#include "tests/runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;
using nlohmann::json;

TEST_CASE("exec streams started and output notifications, then the result", "[daemon]") {
  daemon_process d;
  line_client c(d.socket);
  c.call(1, "exec", {{"argv", {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}}});
  std::vector<json> notes;
  auto r = c.reply(1, &notes);
  REQUIRE(r.contains("result"));
  CHECK(r["result"]["exit_code"] == 3);
  CHECK(r["result"]["verdict"] == "exited");
  CHECK(r["result"]["tier"] == "landlock");
  REQUIRE(!notes.empty());
  CHECK(notes.front()["method"] == "exec.started");
  CHECK(notes.front()["params"]["execution_id"] == r["result"]["execution_id"]);
  std::string out, err;
  for (auto& n : notes)
    if (n["method"] == "exec.output") (n["params"]["stream"] == "stdout" ? out : err) += n["params"]["data"];
  CHECK(out == "out\n");
  CHECK(err == "err\n");
}

TEST_CASE("streamed output past the live window arrives whole - past the cap it is cut and the child not held", "[daemon]") {
  // The daemon paces live output (output_collector.hpp: a 1 MiB window acknowledged as
  // lines are queued): more than a window must still arrive byte for byte, and once the
  // cap is reached the rest is discarded without waiting for the reader.
  testing::temp_dir conf{"corral-paced-"};
  {
    std::ofstream toml(conf / "corral.toml");
    toml << "[sandbox.limits]\noutput_cap = \"3m\"\ntimeout = 60\n";
  }
  daemon_process d({"--config", conf / "corral.toml"});
  line_client c(d.socket);
  c.call(1, "exec", {{"argv", {"/bin/sh", "-c",
                               "head -c 5000000 /dev/zero | tr '\\0' a; head -c 2000000 /dev/zero | tr '\\0' b >&2"}}});
  std::vector<json> notes;
  auto r = c.reply(1, &notes);
  REQUIRE(r.contains("result"));
  auto& res = r["result"];
  CHECK(res["verdict"] == "output_truncated");  // the program itself exited 0
  CHECK(res["exit_code"] == 0);
  std::string out, err;
  for (auto& n : notes)
    if (n["method"] == "exec.output") (n["params"]["stream"] == "stdout" ? out : err) += n["params"]["data"];
  const std::size_t cap = 3u << 20;
  CHECK(out == std::string(cap, 'a'));
  CHECK(err == std::string(2000000, 'b'));
  CHECK(res["stdout_truncated"] == true);
  CHECK(res["stdout_dropped_bytes"] == 5000000 - cap);
  CHECK(res["stdout"].get<std::string>().rfind(std::string(cap, 'a'), 0) == 0);
  CHECK(res["stderr_truncated"] == false);
  CHECK(res["stderr"] == err);
}

TEST_CASE("capabilities, describe, health and the session methods answer", "[daemon]") {
  daemon_process d;
  line_client c(d.socket);
  c.call(1, "capabilities");
  CHECK(c.reply(1)["result"].contains("tiers"));
  c.call(2, "describe");
  CHECK(c.reply(2)["result"]["digest"].get<std::string>().rfind("sha256:", 0) == 0);
  c.call(3, "health");
  auto h = c.reply(3)["result"];
  CHECK(h["status"] == "ok");
  CHECK(h["clients"] == 1);
  c.call(4, "health", {{"x", 1}});
  CHECK(error_of(c.reply(4))["code"] == rpc::kInvalidParams);
  // The session methods exist: without their parameters they are invalid, not unknown.
  for (auto m : {"session.open", "session.write", "session.resize", "session.close"}) {
    c.call(5, m);
    CHECK(error_of(c.reply(5))["code"] == rpc::kInvalidParams);
  }
}

namespace {

// Notifications for `session` until session.ended (returned) or EOF; output appended.
json session_until_end(line_client& c, const std::string& session, std::string& output) {
  for (;;) {
    auto m = c.next();
    if (m.is_null()) return m;
    if (!m.contains("method") || m["params"]["session"] != session) continue;
    if (m["method"] == "session.output") output += m["params"]["data"].get<std::string>();
    if (m["method"] == "session.ended") return m["params"];
  }
}

// Output of `session` until it contains `needle` (true) or the session ends / EOF.
bool session_output_until(line_client& c, const std::string& session, const std::string& needle, std::string& output) {
  while (output.find(needle) == std::string::npos) {
    auto m = c.next();
    if (m.is_null()) return false;
    if (!m.contains("method") || m["params"]["session"] != session) continue;
    if (m["method"] == "session.ended") return false;
    if (m["method"] == "session.output") output += m["params"]["data"].get<std::string>();
  }
  return true;
}

const char* kEchoServer =
    "import sys\n"
    "for line in sys.stdin:\n"
    "    sys.stdout.write('echo:' + line)\n"
    "    sys.stdout.flush()\n";

} // namespace

TEST_CASE("a stdio session echoes framed messages through session.* and ends on close", "[daemon]") {
  daemon_process d;
  line_client c(d.socket);
  c.call(1, "session.open", {{"kind", "stdio"}, {"argv", {"python3", "-c", kEchoServer}}, {"tier", "landlock"}});
  auto opened = c.reply(1);
  REQUIRE(opened.contains("result"));
  auto id = opened["result"]["session"].get<std::string>();
  std::vector<json> notes;
  c.call(2, "session.write", {{"session", id}, {"data", "hello"}});
  CHECK(c.reply(2, &notes)["result"]["written"] == true);
  c.call(3, "session.write", {{"session", id}, {"data_base64", "d29ybGQ="}});  // "world"
  CHECK(c.reply(3, &notes)["result"]["written"] == true);
  // A newline inside a newline-framed message is refused, and the session goes on.
  c.call(4, "session.write", {{"session", id}, {"data", "a\nb"}});
  CHECK(error_of(c.reply(4, &notes))["code"] == rpc::kInvalidParams);
  c.call(5, "session.write", {{"session", id}, {"data", std::string(5 << 20, 'x')}});
  CHECK(error_of(c.reply(5, &notes))["code"] == rpc::kLimitExceeded);
  c.call(6, "session.resize", {{"session", id}, {"rows", 10}, {"cols", 10}});
  CHECK(error_of(c.reply(6, &notes))["code"] == rpc::kInvalidParams);
  std::vector<std::string> messages;
  for (auto& n : notes)
    if (n["method"] == "session.output") messages.push_back(n["params"]["data"]);
  while (messages.size() < 2) {
    auto m = c.next();
    REQUIRE(!m.is_null());
    if (m.value("method", "") == "session.output") messages.push_back(m["params"]["data"]);
  }
  // One notification per framed message, the newline excluded.
  CHECK(messages == std::vector<std::string>{"echo:hello", "echo:world"});
  c.call(7, "session.close", {{"session", id}});
  std::string rest;
  json ended;
  for (;;) {
    auto m = c.next();
    REQUIRE(!m.is_null());
    if (m.value("method", "") == "session.ended") {
      ended = m["params"];
      break;
    }
  }
  CHECK(ended["session"] == id);
  CHECK((ended["reason"] == "closed" || ended["reason"] == "exited"));
  CHECK(ended["exit_code"] == 0);
  // Ended: the id means nothing any more.
  c.call(8, "session.write", {{"session", id}, {"data", "late"}});
  CHECK(error_of(c.reply(8))["code"] == rpc::kInvalidParams);
  // Content-Length framing both ways: cat sends the framed message straight back.
  c.call(9, "session.open", {{"kind", "stdio"}, {"argv", {"cat"}}, {"framing", "content-length"}});
  auto lsp = c.reply(9);
  REQUIRE(lsp.contains("result"));
  auto lid = lsp["result"]["session"].get<std::string>();
  CHECK(lid != id);
  c.call(10, "session.write", {{"session", lid}, {"data", "line one\nline two"}});
  std::vector<json> lnotes;
  CHECK(c.reply(10, &lnotes)["result"]["written"] == true);
  std::string lout;
  for (auto& n : lnotes)
    if (n["method"] == "session.output") lout += n["params"]["data"];
  CHECK((!lout.empty() || session_output_until(c, lid, "line two", lout)));
  CHECK(lout == "line one\nline two");
  c.call(11, "session.open", {{"kind", "stdio"}, {"argv", {"cat"}}, {"framing", "bogus"}});
  CHECK(error_of(c.reply(11))["code"] == rpc::kInvalidParams);
  c.call(12, "session.open", {{"kind", "stdio"}, {"argv", {"cat"}}, {"no_such", 1}});
  CHECK(error_of(c.reply(12))["code"] == rpc::kInvalidParams);
}

TEST_CASE("a stdio session with forward_stderr sends the child's stderr as session.stderr while it runs", "[daemon]") {
  daemon_process d;
  line_client c(d.socket);
  c.call(1, "session.open", {{"kind", "stdio"}, {"forward_stderr", "yes"}, {"argv", {"cat"}}});
  CHECK(error_of(c.reply(1))["code"] == rpc::kInvalidParams);
  // The child's stderr comes before it has read anything: live, not at the end.
  c.call(2, "session.open", {{"kind", "stdio"},
                             {"forward_stderr", true},
                             {"argv", {"/bin/sh", "-c", "printf 'log-one\\n\\377\\n' >&2; read x; echo \"got:$x\"; echo log-two >&2"}}});
  auto opened = c.reply(2);
  REQUIRE(opened.contains("result"));
  auto id = opened["result"]["session"].get<std::string>();
  std::string err;
  std::vector<std::string> err_base64;
  json ended;
  auto take = [&](const json& m) {
    if (m.value("method", "") == "session.stderr" && m["params"]["session"] == id) {
      err += m["params"]["data"].get<std::string>();
      if (m["params"].contains("data_base64")) err_base64.push_back(m["params"]["data_base64"]);
    }
    if (m.value("method", "") == "session.ended") ended = m["params"];
  };
  while (err.find("log-one") == std::string::npos) {
    auto m = c.next();
    REQUIRE(!m.is_null());
    take(m);
  }
  c.call(3, "session.write", {{"session", id}, {"data", "ping"}});
  while (ended.is_null()) {
    auto m = c.next();
    REQUIRE(!m.is_null());
    take(m);
  }
  CHECK(err == "log-one\n\xEF\xBF\xBD\nlog-two\n");  // the byte that is not UTF-8 as U+FFFD...
  CHECK(!err_base64.empty());                        // ...and exactly in data_base64
  CHECK(ended["exit_code"] == 0);
}

TEST_CASE("one client's session is invisible to another - a disconnect ends the session's child", "[daemon]") {
  daemon_process d;
  line_client b(d.socket);
  {
    line_client a(d.socket);
    a.call(1, "session.open", {{"kind", "stdio"}, {"argv", {"sleep", "30.5757"}}});
    auto opened = a.reply(1);
    REQUIRE(opened.contains("result"));
    auto id = opened["result"]["session"].get<std::string>();
    REQUIRE(eventually([] { return !with_arg("30.5757").empty(); }));
    for (auto m : {"session.write", "session.close"}) {
      json p{{"session", id}};
      if (std::string(m) == "session.write") p["data"] = "x";
      b.call(1, m, p);
      CHECK(error_of(b.reply(1))["code"] == rpc::kInvalidParams);
    }
    b.call(2, "session.resize", {{"session", id}, {"rows", 5}, {"cols", 5}});
    CHECK(error_of(b.reply(2))["code"] == rpc::kInvalidParams);
    b.call(3, "health");
    CHECK(b.reply(3)["result"]["this_client"]["sessions"] == 0);
    CHECK(!with_arg("30.5757").empty());  // b's attempts left it alone
    a.call(2, "health");
    CHECK(a.reply(2)["result"]["this_client"]["sessions"] == 1);
  }
  CHECK(eventually([] { return with_arg("30.5757").empty(); }, 10s));
  CHECK(pid_alive(d.pid));
}

TEST_CASE("a terminal session through the daemon: resize, then stty size sees it", "[daemon]") {
  daemon_process d;
  {
    line_client c(d.socket);
    c.call(1, "session.open", {{"kind", "terminal"}, {"rows", 24}, {"cols", 80}});
    auto opened = c.reply(1);
    REQUIRE(opened.contains("result"));
    auto id = opened["result"]["session"].get<std::string>();
    // The shell runs (its answer is not in the echoed input) before the resize.
    c.call(2, "session.write", {{"session", id}, {"data", "echo $((6*7))x\n"}});
    CHECK(c.reply(2)["result"]["written"] == true);
    std::string out;
    REQUIRE(session_output_until(c, id, "42x", out));
    c.call(3, "session.resize", {{"session", id}, {"rows", 33}, {"cols", 111}});
    CHECK(c.reply(3)["result"]["resized"] == true);
    c.call(5, "session.write", {{"session", id}, {"data", "stty size\n"}});
    CHECK(c.reply(5)["result"]["written"] == true);
    CHECK(session_output_until(c, id, "33 111", out));
    c.call(4, "session.write", {{"session", id}, {"data", "exit 7\n"}});
    auto ended = session_until_end(c, id, out);
    REQUIRE(!ended.is_null());
    CHECK(ended["reason"] == "exited");
    CHECK(ended["exit_code"] == 7);
  }
  {  // a terminal left open is cancelled when its client disconnects
    {
      line_client c(d.socket);
      c.call(1, "session.open", {{"kind", "terminal"}, {"argv", {"sleep", "30.7979"}}});
      REQUIRE(c.reply(1).contains("result"));
      REQUIRE(eventually([] { return !with_arg("30.7979").empty(); }));
    }
    CHECK(eventually([] { return with_arg("30.7979").empty(); }, 10s));
  }
}

TEST_CASE("every error code a client can provoke, and the daemon keeps serving", "[daemon]") {
  daemon_process d;
  line_client c(d.socket);
  c.send("{oops");
  CHECK(error_of(c.next())["code"] == rpc::kParseError);
  c.send(std::string(200000, '['));
  CHECK(error_of(c.next())["code"] == rpc::kParseError);
  c.send(R"([{"jsonrpc":"2.0","id":1,"method":"health"}])");
  CHECK(error_of(c.next())["code"] == rpc::kInvalidRequest);
  c.send(R"({"id":1,"method":"health"})");
  CHECK(error_of(c.next())["code"] == rpc::kInvalidRequest);
  c.send(R"({"jsonrpc":"2.0","method":"exec","params":{"argv":["true"]}})");  // a notification: no answer
  c.call(2, "no.such");
  CHECK(error_of(c.reply(2))["code"] == rpc::kMethodNotFound);
  c.call(3, "exec", {{"argv", "ls"}});
  CHECK(error_of(c.reply(3))["code"] == rpc::kInvalidParams);
  c.call(4, "exec", {{"argv", json::array()}});
  CHECK(error_of(c.reply(4))["code"] == rpc::kInvalidParams);
  c.call(5, "exec", {{"argv", {"true"}}, {"tier", "host"}});
  CHECK(error_of(c.reply(5))["code"] == rpc::kRefused);
  c.call(6, "exec", {{"argv", {"true"}}, {"tier", "no-such-tier"}});
  auto unknown_tier = error_of(c.reply(6))["code"];
  CHECK((unknown_tier == rpc::kTierUnavailable || unknown_tier == rpc::kInvalidParams));
  c.call(7, "exec", {{"argv", {"/nonexistent/program"}}});
  CHECK(error_of(c.reply(7))["code"] == rpc::kSpawnFailed);
  c.send(std::string(9 << 20, 'x'));  // past the 8 MiB line limit
  CHECK(error_of(c.next())["code"] == rpc::kLimitExceeded);
  c.call(8, "cancel", {{"id", 999}});
  CHECK(error_of(c.reply(8))["code"] == rpc::kInvalidParams);
  c.call(9, "cancel", {{"id", {1}}});
  CHECK(error_of(c.reply(9))["code"] == rpc::kInvalidParams);
  c.call(10, "health");
  CHECK(c.reply(10)["result"]["status"] == "ok");
  // An exec that times out is a result, not an error.
  c.call(11, "exec", {{"argv", {"sleep", "5"}}, {"timeout", 0.3}});
  CHECK(c.reply(11)["result"]["verdict"] == "timed_out");
}

TEST_CASE("cancel ends this client's exec - another client can neither see nor cancel it", "[daemon]") {
  daemon_process d;
  line_client a(d.socket), b(d.socket);
  a.call(1, "exec", {{"argv", {"sleep", "30.1717"}}});
  REQUIRE(eventually([] { return !with_arg("30.1717").empty(); }));
  b.call(1, "cancel", {{"id", 1}});
  CHECK(error_of(b.reply(1))["code"] == rpc::kInvalidParams);
  CHECK(!with_arg("30.1717").empty());
  b.call(2, "health");
  CHECK(b.reply(2)["result"]["this_client"]["executions"] == 0);
  a.call(2, "cancel", {{"id", 1}});
  CHECK(a.reply(2)["result"]["cancelled"] == true);
  CHECK(a.reply(1)["result"]["verdict"] == "cancelled");
  CHECK(eventually([] { return with_arg("30.1717").empty(); }));
}

TEST_CASE("a client that disconnects mid-execution has it cancelled and cleaned up", "[daemon]") {
  daemon_process d;
  {
    line_client c(d.socket);
    c.call(1, "exec", {{"argv", {"sleep", "30.2828"}}});
    REQUIRE(eventually([] { return !with_arg("30.2828").empty(); }));
  }
  CHECK(eventually([] { return with_arg("30.2828").empty(); }, 5s));
  CHECK(eventually([&] {
    line_client c(d.socket);
    c.call(1, "health");
    return c.reply(1)["result"]["executions"]["running"] == 0;
  }));
  CHECK(pid_alive(d.pid));
}

TEST_CASE("a client that never reads is disconnected - others are unaffected", "[daemon]") {
  daemon_process d;
  line_client lazy(d.socket);
  int small = 4096;
  ::setsockopt(lazy.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  std::string burst;
  for (int i = 0; i < 200; ++i) burst += rpc::request_line(i, "capabilities", json::object());
  // ~200 answers of a few KiB each per burst: past the 16 MiB bound after some bursts. How
  // many depends on how fast the daemon answers (a sanitizer build is several times slower),
  // so the bound is time, not a count of rounds.
  bool cut = false;
  auto give_up = std::chrono::steady_clock::now() + 90s;
  while (!cut && std::chrono::steady_clock::now() < give_up) {
    ssize_t n = ::send(lazy.fd, burst.data(), burst.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN) cut = true;
    std::this_thread::sleep_for(5ms);
    line_client other(d.socket);
    other.call(1, "health");
    auto h = other.reply(1)["result"];
    if (h["clients"] == 1) cut = true;  // only `other`: the lazy one was dropped
  }
  CHECK(cut);
  CHECK(pid_alive(d.pid));
}

// Resident memory of `pid` in bytes (VmRSS), 0 when it is gone.
static std::uint64_t rss_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

TEST_CASE("a client that stops reading streamed exec output is cut off: bounded memory, its child gone", "[daemon]") {
  // A cap far above the daemon's 16 MiB pending-output bound, and a timeout far beyond the
  // waits below: only the disconnect can end this execution in time.
  testing::temp_dir conf{"corral-slow-reader-"};
  {
    std::ofstream toml(conf / "corral.toml");
    toml << "[sandbox.limits]\noutput_cap = \"1g\"\ntimeout = 600\n";
  }
  daemon_process d({"--config", conf / "corral.toml"});
  {
    line_client warm(d.socket);  // the runtime's first execution allocates what it keeps
    warm.call(1, "exec", {{"argv", {"/bin/sh", "-c", "echo warm"}}});
    REQUIRE(warm.reply(1).contains("result"));
  }
  auto rss_before = rss_of(d.pid);
  REQUIRE(rss_before > 0);
  line_client lazy(d.socket);
  int small = 4096;
  ::setsockopt(lazy.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  lazy.call(1, "exec", {{"argv", {"yes", "corral-slow-reader-5757"}}});
  REQUIRE(eventually([] { return !with_arg("corral-slow-reader-5757").empty(); }, 10s));
  // Meanwhile another client is answered, and the daemon never holds much of the flood.
  std::uint64_t rss_peak = rss_before;
  std::size_t answered = 0;
  bool gone = eventually([&] {
    rss_peak = std::max(rss_peak, rss_of(d.pid));
    line_client other(d.socket);
    other.call(1, "health");
    if (other.reply(1)["result"]["status"] == "ok") ++answered;
    return with_arg("corral-slow-reader-5757").empty();
  }, 60s);
  CHECK(gone);
  CHECK(answered > 0);
  INFO("daemon RSS before " << rss_before << ", peak " << rss_peak);
  // Measured: about 42 MiB. AddressSanitizer keeps freed memory in its quarantine (256 MiB
  // by default) before reusing it, so its build holds more without leaking any.
#if defined(__SANITIZE_ADDRESS__)
  constexpr std::uint64_t kSanitizerQuarantine = 256u << 20;
#else
  constexpr std::uint64_t kSanitizerQuarantine = 0;
#endif
  CHECK(rss_peak - rss_before < (128u << 20) + kSanitizerQuarantine);
  // The lazy client finds its connection closed once it reads what was queued.
  std::size_t drained = 0;
  bool eof = false, stuck = false;
  while (!eof && !stuck && drained < (1u << 30)) {
    char chunk[65536];
    ssize_t n = ::read(lazy.fd, chunk, sizeof chunk);  // bounded by the socket's 20 s timeout
    eof = n == 0;
    stuck = n < 0;
    if (n > 0) drained += static_cast<std::size_t>(n);
  }
  INFO("the lazy client read " << drained << " bytes before the end");
  CHECK(eof);
  CHECK(drained < (64u << 20));
  CHECK(pid_alive(d.pid));
}

TEST_CASE("peer credentials outside the allow list are refused", "[daemon]") {
  SECTION("a uid that is not listed") {
    daemon_process d({"--allow-uid", "12345"});
    line_client c(d.socket);
    auto e = c.next();
    CHECK(error_of(e)["code"] == rpc::kRefused);
    CHECK(c.next().is_null());  // then the hang-up
  }
  SECTION("another user, with the socket opened up on the filesystem") {
    if (::geteuid() != 0) return;  // setuid needs root
    daemon_process d;
    // Wide file modes, so only SO_PEERCRED stands between uid 65534 and the daemon.
    ::chmod(d.dir.path().c_str(), 0755);
    ::chmod(d.socket.c_str(), 0666);
    int pipefd[2];
    REQUIRE(::pipe(pipefd) == 0);
    pid_t child = ::fork();
    if (child == 0) {
      ::close(pipefd[0]);
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
      int fd = connect_to(d.socket);
      if (fd < 0) ::_exit(3);
      char buf[4096];
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) (void)!::write(pipefd[1], buf, static_cast<std::size_t>(n));
      ::_exit(0);
    }
    ::close(pipefd[1]);
    std::string got;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
    ::close(pipefd[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WEXITSTATUS(status) == 0);
    auto e = json::parse(got);
    CHECK(e["error"]["code"] == rpc::kRefused);
    CHECK(e["error"]["message"].get<std::string>().find("uid 65534") != std::string::npos);
  }
}

TEST_CASE("the socket is 0600 in a private directory - a live one is not taken over", "[daemon]") {
  daemon_process d;
  struct stat st {};
  REQUIRE(::stat(d.socket.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // A second daemon on the same socket refuses instead of stealing it.
  pid_t second = ::fork();
  if (second == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 2);
    ::execl(CORRAL_TEST_CLI, CORRAL_TEST_CLI, "serve", "--socket", d.socket.c_str(), "--state-dir",
            (d.dir / "state2").c_str(), nullptr);
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(second, &status, 0);
  CHECK(WEXITSTATUS(status) == 125);
  line_client c(d.socket);
  c.call(1, "health");
  CHECK(c.reply(1)["result"]["status"] == "ok");
}

TEST_CASE("SIGTERM ends executions and removes the socket - after SIGKILL a restart sweeps and serves", "[daemon]") {
  daemon_process d;
  {
    line_client c(d.socket);
    c.call(1, "exec", {{"argv", {"sleep", "30.3939"}}});
    REQUIRE(eventually([] { return !with_arg("30.3939").empty(); }));
    int status = d.stop(SIGTERM);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(::access(d.socket.c_str(), F_OK) != 0);
    CHECK(with_arg("30.3939").empty());
  }
  d.start();
  {
    line_client c(d.socket);
    c.call(1, "exec", {{"argv", {"sleep", "30.4646"}}});
    REQUIRE(eventually([] { return !with_arg("30.4646").empty(); }));
    d.stop(SIGKILL);
  }
  CHECK(::access(d.socket.c_str(), F_OK) == 0);  // stale, left behind
  // The landlock child lives on in its cgroup until the next start sweeps its lease.
  d.start();
  CHECK(eventually([] { return with_arg("30.4646").empty(); }));
  line_client c(d.socket);
  c.call(1, "health");
  CHECK(c.reply(1)["result"]["status"] == "ok");
}

TEST_CASE("serve --stdio serves one client on stdin/stdout and exits when it hangs up", "[daemon]") {
  testing::temp_dir dir{"corral-stdio-"};
  int in[2], out[2];
  REQUIRE(::pipe(in) == 0);
  REQUIRE(::pipe(out) == 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::close(in[1]);
    ::close(out[0]);
    ::execl(CORRAL_TEST_CLI, CORRAL_TEST_CLI, "serve", "--stdio", "--state-dir", (dir / "state").c_str(), nullptr);
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  std::string req = rpc::request_line(1, "exec", {{"argv", {"/bin/echo", "via stdio"}}});
  REQUIRE(::write(in[1], req.data(), req.size()) == static_cast<ssize_t>(req.size()));
  std::string got;
  char buf[4096];
  while (got.find("\"result\"") == std::string::npos) {
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  CHECK(got.find("via stdio") != std::string::npos);
  ::close(in[1]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  ::close(out[0]);
}

TEST_CASE("SIGTERM answers every call in flight with -32010, removes what it made and exits 0", "[daemon][stop]") {
  daemon_process d;
  std::vector<std::unique_ptr<line_client>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<line_client>(d.socket));
    clients.back()->call(1, "exec", {{"argv", {"sleep", "30.717" + std::to_string(i)}}});
  }
  REQUIRE(eventually([] { return with_arg("30.7170").size() + with_arg("30.7171").size() + with_arg("30.7172").size() == 3; }));
  ::kill(d.pid, SIGTERM);
  for (auto& c : clients) {
    auto reply = c->reply(1);
    INFO(reply.dump());
    REQUIRE(reply.contains("error"));
    CHECK(reply["error"]["code"] == rpc::kStopping);
    CHECK(reply["error"]["data"]["kind"] == "stopping");
    CHECK(c->next().is_null());  // then the connection is closed
  }
  int status = d.stop(0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(::access(d.socket.c_str(), F_OK) != 0);
  CHECK(with_arg("30.7170").empty());
  for (auto sub : {"/state/leases", "/state/scratch", "/state/owners"}) {
    INFO(sub);
    CHECK(std::filesystem::is_empty(d.dir / sub));
  }
}

TEST_CASE("SIGHUP is ignored: running executions finish with their results", "[daemon][stop]") {
  daemon_process d;
  line_client c(d.socket);
  c.call(1, "exec", {{"argv", {"sleep", "1.4141"}}});
  REQUIRE(eventually([] { return !with_arg("1.4141").empty(); }));
  ::kill(d.pid, SIGHUP);
  auto reply = c.reply(1);
  INFO(reply.dump());
  CHECK(reply["result"]["exit_code"] == 0);
  CHECK(pid_alive(d.pid));
  c.call(2, "health");
  CHECK(c.reply(2)["result"]["status"] == "ok");
}

TEST_CASE("a client's backlog does not hold back another client's first execution", "[daemon][fair]") {
  daemon_process d;
  line_client a(d.socket);
  // 16 slots: 16 of A's run, 16 wait.
  for (int i = 1; i <= 32; ++i) a.call(i, "exec", {{"argv", {"sleep", "2.5353"}}});
  REQUIRE(eventually([] { return with_arg("2.5353").size() == 16; }));
  line_client b(d.socket);
  b.call(1, "exec", {{"argv", {"/bin/true"}}});
  std::vector<json> notes;
  auto reply = b.reply(1, &notes);
  INFO(reply.dump());
  CHECK(reply["result"]["exit_code"] == 0);
  json queued;
  for (auto& n : notes)
    if (n["method"] == "execution_queued") queued = n["params"];
  INFO(queued.dump());
  REQUIRE(queued.is_object());
  // Ordering, not wall clock: B was queued behind at most one of A's, not A's 16 (FIFO
  // would put it at 17). A check of A's backlog once B is done was dropped: A's first
  // 16 sleeps end together, and on a loaded machine their successors start while B's
  // reply is on its way (7 of 16 still waiting where 8 were expected).
  CHECK(queued["position"] <= 2);
  CHECK(queued["queued_for_client"] == 1);
}

TEST_CASE("an idle connection is closed, a busy one is not", "[daemon][idle]") {
  daemon_process d({"--idle-timeout", "1"});
  line_client idle(d.socket);
  line_client busy(d.socket);
  busy.call(1, "exec", {{"argv", {"sleep", "2.5"}}});
  CHECK(idle.next().is_null());  // closed after a second of nothing
  auto reply = busy.reply(1);
  INFO(reply.dump());
  CHECK(reply["result"]["exit_code"] == 0);
}

TEST_CASE("serve says listening only once the socket accepts", "[daemon]") {
  testing::temp_dir dir{"corral-listen-"};
  ::mkdir((dir / "open").c_str(), 0777);
  ::chmod((dir / "open").c_str(), 0777);  // writable by others: refused
  std::string cmd = std::string(CORRAL_TEST_CLI) + " serve --socket " + dir / "open/d.sock" + " --state-dir " +
                    dir / "state" + " > " + dir / "out" + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(dir / "out");
  std::string out((std::istreambuf_iterator<char>(in)), {});
  INFO(out);
  CHECK(WEXITSTATUS(rc) == 125);
  CHECK(out.find("listening on") == std::string::npos);
}
