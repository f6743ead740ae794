// Stdio sessions: framing without actors, then a JSON-RPC echo server through the runtime on
// the host and landlock tiers (order, size, limits, backpressure, deadlines, close).
#include <chrono>
#include <csignal>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>

#include "actors/message_framing.hpp"
#include "actors/session_client.hpp"
#include "runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

// Echoes each JSON-RPC request line as a response carrying the same id and params.
const char* const kEchoServer = R"(import sys, json
out = sys.stdout.buffer
while True:
    line = sys.stdin.buffer.readline()
    if not line:
        break
    msg = json.loads(line)
    out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": msg["params"]}).encode() + b"\n")
    out.flush()
)";

profile landlock_profile() {
  profile p;
  p.tier = "landlock";
  p.limit.kill_grace = 200ms;
  return p;
}

session_request echo_request() {
  session_request r;
  // Not a bare name: a version manager's shim first on PATH (pyenv) is a chain of shell
  // scripts, not the server under test.
  r.argv = {"/usr/bin/python3", "-u", "-c", kEchoServer};
  return r;
}

std::string request_line(int id, const std::string& payload) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"echo","params":")" + payload + R"("})";
}

// Pids of processes whose command line contains `marker` (seen from outside any jail).
std::vector<pid_t> processes_with(const std::string& marker) {
  std::vector<pid_t> found;
  DIR* d = ::opendir("/proc");
  if (!d) return found;
  while (auto* e = ::readdir(d)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0 || pid == ::getpid()) continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline");
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (auto& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(marker) != std::string::npos) found.push_back(pid);
  }
  ::closedir(d);
  return found;
}

bool gone_within(const std::string& marker, std::chrono::milliseconds bound) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (!processes_with(marker).empty()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

long rss_kib() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

std::unique_ptr<session_client> open_or_fail(runtime& rt, const session_request& r) {
  auto s = session_client::open(rt, r);
  if (!s) FAIL("open_session: " << s.error().describe());
  return std::move(*s);
}

// 10,000 requests, at most a small window ahead, every 500th larger than a pipe buffer.
void round_trip_10k(runtime& rt) {
  auto s = open_or_fail(rt, echo_request());
  const int total = 10'000;
  const std::string big(100 * 1024, 'x');
  auto payload = [&](int i) { return i % 500 == 0 ? big : "msg-" + std::to_string(i); };
  int sent = 0, received = 0;
  std::size_t ahead_bytes = 0;
  while (received < total) {
    while (sent < total && (sent == received || (sent - received < 16 && ahead_bytes < 128 * 1024))) {
      auto line = request_line(sent, payload(sent));
      ahead_bytes += line.size();
      auto st = s->send(std::move(line));
      REQUIRE(st);
      ++sent;
    }
    auto m = s->receive(10s);
    if (!m) FAIL("message " << received << ": " << m.error().describe() << " stderr: "
                            << (s->ended() ? s->ended()->stderr_tail : ""));
    auto expect_id = "\"id\": " + std::to_string(received) + ",";
    if (m->find(expect_id) == std::string::npos) {
      auto next = s->receive(2s);
      FAIL("message " << received << " is " << m->substr(0, 120) << "; the next is "
                      << (next ? next->substr(0, 120) : next.error().describe()));
    }
    auto p = payload(received);
    REQUIRE(m->find("\"result\": \"" + p + "\"") != std::string::npos);
    ahead_bytes -= request_line(received, p).size();
    ++received;
  }
  s->close();
  auto end = s->wait_ended(10s);
  REQUIRE(end);
  CHECK(end->reason == session_end_reason::closed);
  CHECK(end->exit_code == 0);
  CHECK(end->messages_out == static_cast<std::uint64_t>(total));
  CHECK(end->messages_in == static_cast<std::uint64_t>(total));
}

} // namespace

TEST_CASE("newline framing cuts lines across chunks and refuses an oversized one", "[session]") {
  frame_decoder d(framing_mode::newline, 8);
  std::vector<decoded_frame> out;
  d.feed("ab", out);
  d.feed("c\nde\n", out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].message == "abc");
  CHECK(out[1].message == "de");
  out.clear();
  d.feed("0123456789", out);  // over the limit before its newline: refused now
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].error);
  CHECK(out[0].error->kind == failure_kind::limit_exceeded);
  CHECK(out[0].error->message.find("limit of 8 bytes") != std::string::npos);
  CHECK_FALSE(out[0].fatal);
  out.clear();
  d.feed("abc\nok\n", out);  // the rest of the refused line is skipped, then it goes on
  REQUIRE(out.size() == 1);
  CHECK(out[0].message == "ok");
  CHECK(d.buffered() == 0);
}

TEST_CASE("content-length framing parses headers, skips an oversized body, breaks on garbage", "[session]") {
  frame_decoder d(framing_mode::content_length, 10);
  std::vector<decoded_frame> out;
  std::string wire = "Content-Type: x\r\ncontent-length: 5\r\n\r\nhello";
  for (char c : wire) d.feed(std::string_view(&c, 1), out);  // one byte at a time
  REQUIRE(out.size() == 1);
  CHECK(out[0].message == "hello");
  out.clear();
  d.feed("Content-Length: 20\r\n\r\n01234567890123456789Content-Length: 2\r\n\r\nok", out);
  REQUIRE(out.size() == 2);
  REQUIRE(out[0].error);
  CHECK(out[0].error->kind == failure_kind::limit_exceeded);
  CHECK(out[1].message == "ok");
  out.clear();
  d.feed("Content-Length: banana\r\n\r\n", out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].fatal);
  CHECK(d.broken());
}

TEST_CASE("encoding refuses what cannot be framed", "[session]") {
  CHECK(*encode_frame(framing_mode::newline, "{}", 10) == "{}\n");
  CHECK(*encode_frame(framing_mode::content_length, "{}", 10) == "Content-Length: 2\r\n\r\n{}");
  CHECK(*encode_frame(framing_mode::raw, "a\nb", 10) == "a\nb");
  auto big = encode_frame(framing_mode::newline, std::string(11, 'x'), 10);
  REQUIRE_FALSE(big);
  CHECK(big.error().kind == failure_kind::limit_exceeded);
  CHECK_FALSE(encode_frame(framing_mode::newline, "a\nb", 10));
}

TEST_CASE("a JSON-RPC echo server round-trips 10,000 messages in order on the host tier", "[session][host]") {
  test_runtime t;
  round_trip_10k(*t.rt);
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("a JSON-RPC echo server round-trips 10,000 messages in order on the landlock tier", "[session][landlock]") {
  test_runtime t(landlock_profile(), false);
  round_trip_10k(*t.rt);
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("a message over the limit is refused both ways with a clear error", "[session][host]") {
  test_runtime t;
  auto r = echo_request();
  r.max_message_bytes = 1024;
  auto s = open_or_fail(*t.rt, r);
  auto st = s->send(request_line(1, std::string(2000, 'y')));
  REQUIRE_FALSE(st);
  CHECK(st.error().kind == failure_kind::limit_exceeded);
  CHECK(st.error().message.find("limit is 1024 bytes") != std::string::npos);
  // The child's side: a 5000-byte line is refused, the next message still arrives.
  session_request chatty;
  chatty.argv = {"/usr/bin/python3", "-u", "-c", "print('z' * 5000); print('after'); import sys; sys.stdin.read()"};
  chatty.max_message_bytes = 1024;
  auto c = open_or_fail(*t.rt, chatty);
  auto first = c->receive(10s);
  REQUIRE_FALSE(first);
  CHECK(first.error().kind == failure_kind::limit_exceeded);
  auto second = c->receive(10s);
  REQUIRE(second);
  CHECK(*second == "after");
  c->close();
  s->close();
  CHECK(c->wait_ended(10s));
  CHECK(s->wait_ended(10s));
}

TEST_CASE("a slow consumer makes the child block, not the runtime grow", "[session][host]") {
  test_runtime t;
  session_request r;
  std::string line(1000, 'A');
  r.argv = {"yes", line};
  r.initial_credit = 8;
  auto before = rss_kib();
  auto s = open_or_fail(*t.rt, r);
  REQUIRE(s->receive(10s));
  // The consumer takes nothing for two seconds while the child could write gigabytes.
  std::this_thread::sleep_for(2s);
  auto info = s->info();
  REQUIRE(info);
  CHECK(info->phase == session_phase::running);
  // Held by the runtime: the undelivered messages within the output window, nothing more.
  CHECK(info->buffered_bytes <= r.output_window_bytes + r.max_message_bytes);
  CHECK(info->messages_out <= 8);
  auto grown = rss_kib() - before;
  INFO("RSS growth " << grown << " KiB");
  CHECK(grown < 32 * 1024);
  // The child is asleep in a write to its full stdout.
  auto yes = processes_with(line.substr(0, 200));
  REQUIRE(yes.size() == 1);
  std::ifstream wchan("/proc/" + std::to_string(yes[0]) + "/wchan");
  std::string where;
  wchan >> where;
  CHECK(where.find("pipe") != std::string::npos);
  // And it resumes, in order, when the consumer does.
  for (int i = 0; i < 1000; ++i) {
    auto m = s->receive(10s);
    REQUIRE(m);
    REQUIRE(*m == line);
  }
  s->cancel();
  auto end = s->wait_ended(10s);
  REQUIRE(end);
  CHECK(end->reason == session_end_reason::cancelled);
  CHECK(gone_within(line.substr(0, 200), 5s));
}

TEST_CASE("the idle deadline ends a session and its descendants", "[session][host]") {
  test_runtime t;
  session_request r;
  // Ignores EOF on stdin, so the end must come from the grace and the lease.
  r.argv = {"sh", "-c", "sleep 31337 & while :; do sleep 1; done"};
  r.idle_timeout = 300ms;
  r.close_grace = 300ms;
  auto s = open_or_fail(*t.rt, r);
  auto end = s->wait_ended(10s);
  REQUIRE(end);
  CHECK(end->reason == session_end_reason::idle);
  CHECK(gone_within("sleep 31337", 5s));
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("the lifetime deadline ends a busy session and its descendants on landlock", "[session][landlock]") {
  test_runtime t(landlock_profile(), false);
  session_request r;
  r.argv = {"sh", "-c", "sleep 31338 & exec cat"};
  r.framing = framing_mode::raw;
  r.idle_timeout = 5s;
  r.lifetime = 700ms;
  auto s = open_or_fail(*t.rt, r);
  auto started = std::chrono::steady_clock::now();
  // Busy: never idle, so only the lifetime can end it.
  while (!s->ended() && std::chrono::steady_clock::now() - started < 10s) {
    if (!s->send("ping\n")) break;
    (void)s->receive(50ms);
  }
  auto end = s->wait_ended(10s);
  REQUIRE(end);
  CHECK(end->reason == session_end_reason::lifetime);
  CHECK(std::chrono::steady_clock::now() - started < 5s);
  CHECK(gone_within("sleep 31338", 5s));
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("a session reports its child's exit, its stderr tail, and a start failure", "[session][host]") {
  test_runtime t;
  session_request r;
  r.argv = {"sh", "-c", "echo to-stderr >&2; exit 3"};
  auto s = open_or_fail(*t.rt, r);
  auto end = s->wait_ended(10s);
  REQUIRE(end);
  CHECK(end->reason == session_end_reason::exited);
  CHECK(end->exit_code == 3);
  CHECK(end->stderr_tail == "to-stderr\n");
  session_request missing;
  missing.argv = {"/nonexistent/server"};
  auto m = open_or_fail(*t.rt, missing);
  auto mend = m->wait_ended(10s);
  REQUIRE(mend);
  CHECK(mend->reason == session_end_reason::failed);
  CHECK(mend->detail.find("/nonexistent/server") != std::string::npos);
}

TEST_CASE("closing only stdin lets the child finish on its own, past the close grace", "[session][host]") {
  test_runtime t;
  session_request r;
  // Reads to EOF, then outlives the grace a close would give it, then exits 7.
  r.argv = {"sh", "-c", "cat; sleep 0.6; echo after-eof; exit 7"};
  r.framing = framing_mode::raw;
  r.close_grace = 100ms;
  auto s = open_or_fail(*t.rt, r);
  REQUIRE(s->send("piped\n"));
  s->close_stdin();
  std::string out;
  while (out.find("after-eof") == std::string::npos) {
    auto m = s->receive(10s);
    if (!m) break;
    out += *m;
  }
  CHECK(out == "piped\nafter-eof\n");
  auto end = s->wait_ended(10s);
  REQUIRE(end);
  CHECK(end->reason == session_end_reason::exited);
  CHECK(end->exit_code == 7);
  // The input is closed: a later send is refused, not lost silently.
  CHECK(!s->send("late"));
}

TEST_CASE("the owner's death cancels its session", "[session][host]") {
  test_runtime t;
  session_request r;
  r.argv = {"sh", "-c", "sleep 31339 & exec cat"};
  {
    caf::scoped_actor owner{t.rt->system()};
    auto h = t.rt->open_session(r, caf::actor_cast<caf::actor>(owner));
    REQUIRE(h);
    std::this_thread::sleep_for(300ms);
    REQUIRE(processes_with("sleep 31339").size() == 1);
  }
  CHECK(gone_within("sleep 31339", 10s));
  CHECK(tracked_after_settling(*t.rt) == 0);
}

namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// initialize → tools/list → tools/call(echo) with the official SDK's client, the server
// command given on the command line (corral mcp … -- node server stdio).
const char* const kMcpClient = R"(import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "corral-test", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const reply = await client.callTool({ name: "echo", arguments: { message: "hello through corral" } });
console.log(JSON.stringify({ server: client.getServerVersion(), tools: tools.tools.map((t) => t.name), reply }));
await client.close();
)";

} // namespace

TEST_CASE("a real MCP server from npm answers initialize, tools/list and tools/call through corral mcp",
          "[session][mcp][host][landlock]") {
  temp_dir dir("corral-mcp-");
  ::chmod(dir.path().c_str(), 0755);  // the landlock jail reads it as nobody
  // Bounded: a machine without the registry skips instead of hanging.
  std::string install = "cd " + dir.path() +
                        " && timeout 240 npm install --no-audit --no-fund --loglevel=error "
                        "@modelcontextprotocol/server-everything @modelcontextprotocol/sdk > npm.log 2>&1";
  if (std::system(install.c_str()) != 0) {
    WARN("skipped: npm could not install the MCP packages (no registry?): " << read_all(dir / "npm.log").substr(0, 500));
    return;
  }
  {
    std::ofstream f(dir / "client.mjs");
    f << kMcpClient;
  }
  const std::string server = "node_modules/@modelcontextprotocol/server-everything/dist/index.js";
  // corral runs in `cwd`: the profile protects ./.git, which must not lie in a granted root.
  auto run_client = [&](const std::string& cwd, const std::string& corral_args, const std::string& server_path) {
    std::string cmd = "cd " + cwd + " && timeout 90 node " + dir / "client.mjs " + CORRAL_TEST_CLI + " mcp " +
                      corral_args + " -- node " + server_path + " stdio > " + dir / "out.json 2> " + dir / "err.log";
    int rc = std::system(cmd.c_str());
    INFO("stderr: " << read_all(dir / "err.log"));
    CHECK(rc == 0);
    auto out = read_all(dir / "out.json");
    INFO("client output: " << out);
    CHECK(out.find("\"echo\"") != std::string::npos);
    CHECK(out.find("hello through corral") != std::string::npos);
    CHECK(out.find("\"server\":{\"name\"") != std::string::npos);
  };
  SECTION("host tier") { run_client(dir.path(), "--tier host --allow-host", dir / server); }
  SECTION("landlock tier, the install dir granted as a source root") {
    temp_dir cfg("corral-mcp-config-");
    {
      std::ofstream f(cfg / "corral.toml");
      f << "[sandbox]\ntier = \"landlock\"\n[sandbox.roots]\nsource_roots = [\"" << dir.path() << ":/mcp\"]\n";
    }
    run_client(cfg.path(), "--config " + cfg / "corral.toml", "/mcp/" + server);
  }
}

TEST_CASE("corral mcp passes lines unchanged, the server's stderr to stderr, and mirrors its exit", "[session][mcp][host]") {
  temp_dir dir;
  {
    std::ofstream in(dir / "in");
    in << "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n" << std::string(200 * 1024, 'q') << "\n";
  }
  // The server answers each line with its length and exits 7 at EOF.
  std::string cmd = std::string("cd ") + dir.path() + " && timeout 60 " + CORRAL_TEST_CLI +
                    " mcp --tier host --allow-host -- /usr/bin/python3 -u -c '"
                    "import sys\n"
                    "sys.stderr.write(\"server-log\\n\")\n"
                    "for l in sys.stdin: sys.stdout.write(str(len(l)) + \" \" + l[:5] + \"\\n\")\n"
                    "sys.exit(7)' < in > out 2> err";
  int rc = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 7);
  CHECK(read_all(dir / "out") == "39 {\"jso\n204801 qqqqq\n");  // the \r and the 200 KiB line intact
  CHECK(read_all(dir / "err").find("server-log") != std::string::npos);
}
