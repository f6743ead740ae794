// corral mcp as a policy gateway (actors/mcp/), judged from outside: a client script drives
// `corral mcp … -- SERVER` over pipes (tests/mcp/script_client.py) and the probe server
// (tests/mcp/probe_server.py) logs every message it receives on stderr, so each case checks
// both halves: what the client got, and what reached (or never reached) the server. The
// official MCP SDK client with the official servers is the last case (npm; skips without it).
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "tests/landlock_fixture.hpp"
#include "tests/runtime_fixture.hpp"
#include "tests/served_daemon.hpp"

namespace corral {

using namespace testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kProbeDir = std::string(CORRAL_SOURCE_DIR) + "/tests/mcp";

json request(int id, const std::string& method, json params = json::object()) {
  return {{"id", id}, {"method", method}, {"params", std::move(params)}};
}

json call(int id, const std::string& tool, json args = json::object()) {
  return request(id, "tools/call", {{"name", tool}, {"arguments", std::move(args)}});
}

json opening() {
  return json::array({request(0, "initialize",
                              {{"protocolVersion", "2025-06-18"},
                               {"capabilities", json::object()},
                               {"clientInfo", {{"name", "gateway-test"}, {"version", "1"}}}}),
                      {{"method", "notifications/initialized"}}});
}

struct run_result {
  json report;
  std::string stderr_text;
  int status = -1;

  // The answer to request `id`, or null.
  json answer(int id) const {
    for (auto& m : report["received"])
      if (m.value("id", json()) == json(id) && !m.contains("method")) return m;
    return json();
  }
  std::vector<std::string> tools(int id) const {
    std::vector<std::string> out;
    auto a = answer(id);
    for (auto& t : a["result"]["tools"]) out.push_back(t["name"]);
    return out;
  }
  std::size_t server_saw(const std::string& what) const {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = stderr_text.find("probe saw " + what, at)) != std::string::npos; ++at) ++n;
    return n;
  }
};

// Runs the script through `corral mcp FLAGS -- python3 /probe/probe_server.py SERVER_ARGS`
// on the landlock tier, the probe's directory granted read-only at /probe.
run_result drive(const temp_dir& dir, const json& script, const std::string& flags, const std::string& server_args = "") {
  { std::ofstream(dir / "script.json") << script.dump(); }
  std::string cmd = "cd " + dir.path() + " && timeout 120 python3 " + kProbeDir + "/script_client.py script.json -- " +
                    CORRAL_TEST_CLI + " mcp --tier landlock --ro " + kProbeDir + ":/probe " + flags +
                    " -- python3 /probe/probe_server.py " + server_args + " > report.json 2> err.log";
  run_result r;
  r.status = std::system(cmd.c_str());
  r.stderr_text = read_text(dir / "err.log");
  r.report = json::parse(read_text(dir / "report.json"), nullptr, false);
  return r;
}

std::vector<json> audit_lines(const std::string& path) {
  std::vector<json> out;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) out.push_back(json::parse(line, nullptr, false));
  return out;
}

} // namespace

TEST_CASE("the gateway hides tools, refuses calls by name, argument and rate, and the server never sees them",
          "[mcp][gateway][landlock]") {
  REQUIRE_LANDLOCK();
  temp_dir dir("corral-gateway-");
  temp_dir outside("corral-gateway-audit-");  // the host's /tmp: not in the jail's view
  auto audit = outside / "audit.jsonl";
  auto script = opening();
  script.push_back(request(1, "tools/list"));
  script.push_back(call(2, "write_file", {{"path", "/probe/x"}}));
  script.push_back(call(3, "read_file", {{"path", "/probe/probe_server.py"}}));
  script.push_back(call(4, "read_file", {{"path", "/probe/../etc/passwd"}}));
  script.push_back(call(5, "echo", {{"text", "one"}}));
  script.push_back(call(6, "echo", {{"text", "two"}}));
  script.push_back(call(7, "echo", {{"text", "three"}}));
  script.push_back(call(8, "open_path", {{"path", audit}}));
  auto r = drive(dir, script,
                 "--tools-deny write_file --tool-rule 'read_file.path^/probe' --tool-rate 'echo=2/m' --audit " + audit);
  INFO("stderr: " << r.stderr_text << "\nreport: " << r.report.dump());
  REQUIRE(r.report.is_object());
  CHECK(r.report["problems"].empty());
  CHECK(r.report["status"] == 0);

  // Hidden from the listing; refused when called anyway, naming the rule.
  CHECK(r.tools(1) == std::vector<std::string>{"echo", "read_file", "open_path", "mutate"});
  CHECK(r.answer(2)["error"]["code"] == -32602);
  CHECK(r.answer(2)["error"]["data"]["rule"] == "mcp.tools.deny write_file");
  // The argument rule: inside /probe passes (and the server read it), ".." out is refused.
  CHECK(r.answer(3)["result"]["content"][0]["text"].get<std::string>().rfind("read ", 0) == 0);
  CHECK(r.answer(4)["error"]["data"]["rule"] == "mcp.tools.rules read_file.path is under /probe");
  // The rate: two echoes pass, the third is refused.
  CHECK(r.answer(6)["result"]["content"][0]["text"] == "two");
  CHECK(r.answer(7)["error"]["data"]["rule"] == "mcp.tools.rate echo=2/m");
  // What reached the server: exactly the calls that passed.
  CHECK(r.server_saw("tools/call write_file") == 0);
  CHECK(r.server_saw("tools/call read_file") == 1);
  CHECK(r.server_saw("tools/call echo") == 2);
  CHECK(r.server_saw("tools/call open_path") == 1);
  // The server tried the audit file (the call ran) and could not open it: it is outside.
  CHECK(r.answer(8)["result"]["isError"] == true);
  CHECK_THAT(r.answer(8)["result"]["content"][0]["text"].get<std::string>(), Catch::Contains("cannot open"));
  // The refusals are on corral's stderr for the MCP host's log.
  CHECK_THAT(r.stderr_text, Catch::Contains("corral mcp: refused tools/call write_file"));

  // The audit file holds exactly the decisions: the 10 client messages, and the server's 6
  // answers (initialize, tools/list, read_file, echo twice, open_path; none to the 3 refused).
  auto lines = audit_lines(audit);
  REQUIRE(lines.size() == 10 + 6);
  std::size_t refused = 0, filtered = 0;
  for (auto& l : lines) {
    REQUIRE(l.is_object());
    refused += l["decision"] == "refuse";
    filtered += l["decision"] == "filter";
  }
  CHECK(refused == 3);
  CHECK(filtered == 1);
  struct stat st {};
  REQUIRE(::stat(audit.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("a pinned server is refused once its tool definitions change, and the change is reported",
          "[mcp][gateway][pin][landlock]") {
  REQUIRE_LANDLOCK();
  temp_dir dir("corral-gateway-pin-");
  // The pin of the server as it is today.
  std::string print = "cd " + dir.path() + " && timeout 60 " + CORRAL_TEST_CLI + " mcp --tier landlock --ro " +
                      kProbeDir + ":/probe --print-pin --write-pin " + dir / "tools.pin.json" +
                      " -- python3 /probe/probe_server.py > pin.txt 2> pin.err";
  REQUIRE(std::system(print.c_str()) == 0);
  auto pin = read_text(dir / "pin.txt");
  INFO("pin: " << pin << " stderr: " << read_text(dir / "pin.err"));
  REQUIRE(pin.size() == 7 + 64 + 1);
  pin.pop_back();
  auto script = opening();
  script.push_back(request(1, "tools/list"));
  script.push_back(call(2, "echo", {{"text", "hi"}}));

  SECTION("the same server passes") {
    auto r = drive(dir, script, "--pin " + pin);
    INFO("stderr: " << r.stderr_text);
    CHECK(r.tools(1).size() == 5);
    CHECK(r.answer(2)["result"]["content"][0]["text"] == "hi");
  }
  SECTION("a changed description: everything refused, the diff on stderr") {
    auto r = drive(dir, script, "--pin " + pin, "--variant 2");
    INFO("stderr: " << r.stderr_text);
    CHECK(r.answer(1)["error"]["data"]["rule"] == "mcp.pin");
    CHECK(r.answer(2)["error"]["data"]["rule"] == "mcp.pin");
    CHECK(r.server_saw("tools/list") == 1);  // corral's own listing only
    CHECK(r.server_saw("tools/call") == 0);
    CHECK_THAT(r.stderr_text, Catch::Contains("differ from the pin"));
  }
  SECTION("with the pin file and hide: only the changed tool goes, named in the diff") {
    auto r = drive(dir, script, "--pin-file " + dir / "tools.pin.json" + " --on-pin-change hide", "--variant 2");
    INFO("stderr: " << r.stderr_text);
    CHECK(r.tools(1) == std::vector<std::string>{"read_file", "open_path", "write_file", "mutate"});
    CHECK(r.answer(2)["error"]["data"]["rule"] == "mcp.pin");
    CHECK_THAT(r.stderr_text, Catch::Contains("changed: echo (description)"));
  }
  SECTION("tools/list_changed reaches the client and the new definitions are checked again") {
    auto steps = opening();
    steps.push_back(request(1, "tools/list"));
    steps.push_back(call(2, "mutate"));
    steps.push_back(call(3, "echo", {{"text", "after"}}));
    auto r = drive(dir, steps, "--pin " + pin, "--pages");
    INFO("stderr: " << r.stderr_text << "\nreport: " << r.report.dump());
    CHECK(r.tools(1).size() == 2);  // the client's first page; corral followed all three itself
    bool notified = false;
    for (auto& m : r.report["received"]) notified = notified || m.value("method", "") == "notifications/tools/list_changed";
    CHECK(notified);
    CHECK(r.answer(2)["result"]["content"][0]["text"] == "mutated");
    CHECK(r.answer(3)["error"]["data"]["rule"] == "mcp.pin");
    CHECK(r.server_saw("tools/call echo") == 0);
  }
}

TEST_CASE("an audit file the server could reach is refused before the server starts", "[mcp][gateway][landlock]") {
  REQUIRE_LANDLOCK();
  temp_dir dir("corral-gateway-reach-");
  std::string cmd = "cd " + dir.path() + " && timeout 60 " + CORRAL_TEST_CLI + " mcp --tier landlock --rw " +
                    dir.path() + ":/out --audit " + dir / "audit.jsonl" + " -- /bin/true < /dev/null > out 2> err";
  int rc = std::system(cmd.c_str());
  auto err = read_text(dir / "err");
  INFO("stderr: " << err);
  REQUIRE(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 125);
  CHECK_THAT(err, Catch::Contains("which the server can reach"));
  CHECK_FALSE(fs::exists(dir / "audit.jsonl"));
  // A system dir the view shows read-only is as reachable: the server could read it.
  const std::string in_view = "/usr/local/corral-gateway-audit-" + std::to_string(::getpid()) + ".jsonl";
  cmd = "cd " + dir.path() + " && timeout 60 " + CORRAL_TEST_CLI + " mcp --tier landlock --audit " + in_view +
        " -- /bin/true < /dev/null > out 2> err";
  rc = std::system(cmd.c_str());
  err = read_text(dir / "err");
  INFO("stderr: " << err);
  REQUIRE(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 125);
  CHECK_THAT(err, Catch::Contains("the server's view"));
  CHECK_FALSE(fs::exists(in_view));
}

TEST_CASE("a daemon's profile mcp table is the gateway for its stdio sessions, and its decisions are notified",
          "[mcp][gateway][daemon][landlock]") {
  REQUIRE_LANDLOCK();
  temp_dir dir("corral-gateway-daemon-");
  temp_dir outside("corral-gateway-daemon-audit-");
  auto audit = outside / "audit.jsonl";
  {
    std::ofstream f(dir / "corral.toml");
    f << "[sandbox.roots]\nsource_roots = [\"" << kProbeDir << ":/probe\"]\n"
      << "[mcp]\ntools.deny = [\"write_*\"]\naudit = \"" << audit << "\"\n";
  }
  testing::served_daemon d({"--config", dir / "corral.toml"});
  auto script = opening();
  script.push_back(request(1, "tools/list"));
  script.push_back(call(2, "write_file", {{"path", "/probe/x"}}));
  script.push_back(call(3, "echo", {{"text", "via the daemon"}}));
  { std::ofstream(dir / "script.json") << script.dump(); }
  std::string cmd = "cd " + dir.path() + " && timeout 120 python3 " + kProbeDir + "/script_client.py script.json -- " +
                    CORRAL_TEST_CLI + " mcp --connect " + d.socket +
                    " -- python3 /probe/probe_server.py > report.json 2> err.log";
  REQUIRE(std::system(cmd.c_str()) == 0);
  run_result r;
  r.stderr_text = read_text(dir / "err.log");
  r.report = json::parse(read_text(dir / "report.json"), nullptr, false);
  INFO("stderr: " << r.stderr_text << "\nreport: " << r.report.dump());
  REQUIRE(r.report.is_object());
  CHECK(r.tools(1) == std::vector<std::string>{"echo", "read_file", "open_path", "mutate"});
  CHECK(r.answer(2)["error"]["data"]["rule"] == "mcp.tools.deny write_*");
  CHECK(r.answer(3)["result"]["content"][0]["text"] == "via the daemon");
  CHECK(r.server_saw("tools/call write_file") == 0);
  CHECK(r.server_saw("tools/call echo") == 1);
  // The refusal reached the client's stderr through session.gate.
  CHECK_THAT(r.stderr_text, Catch::Contains("corral mcp: refused tools/call write_file"));
  CHECK(audit_lines(audit).size() == 5 + 3);  // 5 client messages, 3 answers (none to the refusal)
}

namespace {

// The official SDK's client against the official servers, through the gateway: lists the
// tools, calls each NAME:ARGS given, and prints what came back (or the error) per call.
const char* const kSdkClient = R"(import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const sep = process.argv.indexOf("--");
const calls = JSON.parse(process.argv[2]);
const [command, ...args] = process.argv.slice(sep + 1);
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "corral-gateway-test", version: "1.0.0" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const results = [];
const took = [];
for (const [name, args, times = 1] of calls) {
  for (let i = 0; i < times; i++) {
    const start = process.hrtime.bigint();
    try { results.push({ name, result: await client.callTool({ name, arguments: args }) }); }
    catch (e) { results.push({ name, error: { code: e.code, message: e.message } }); }
    took.push(Number(process.hrtime.bigint() - start) / 1000);
  }
}
took.sort((a, b) => a - b);
console.log(JSON.stringify({ tools, results, median_us: took[Math.floor(took.length / 2)] }));
await client.close();
)";

} // namespace

TEST_CASE("the official SDK client through the gateway: the everything and filesystem servers under a policy",
          "[mcp][gateway][landlock][npm]") {
  REQUIRE_LANDLOCK();
  temp_dir tools("corral-gateway-npm-");
  ::chmod(tools.path().c_str(), 0755);  // the jail reads it as nobody
  std::string install = "cd " + tools.path() +
                        " && timeout 240 npm install --no-audit --no-fund --loglevel=error "
                        "@modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem "
                        "@modelcontextprotocol/sdk > npm.log 2>&1";
  if (std::system(install.c_str()) != 0) {
    WARN("skipped: npm could not install the MCP packages (no registry?): " << read_text(tools / "npm.log").substr(0, 500));
    return;
  }
  std::ofstream(tools / "client.mjs") << kSdkClient;
  auto run = [&](const std::string& cwd, const json& calls, const std::string& flags, const std::string& server) {
    std::string cmd = "cd " + cwd + " && timeout 120 node " + tools / "client.mjs '" + calls.dump() + "' -- " +
                      CORRAL_TEST_CLI + " mcp --ro " + tools.path() + ":/tools " + flags + " -- node /tools/node_modules/" +
                      server + " > " + tools / "out.json 2> " + tools / "err.log";
    int rc = std::system(cmd.c_str());
    INFO("stderr: " << read_text(tools / "err.log"));
    CHECK(rc == 0);
    return json::parse(read_text(tools / "out.json"), nullptr, false);
  };

  SECTION("everything: only echo is listed; another tool called anyway is refused by corral") {
    temp_dir cwd("corral-gateway-cwd-");
    auto out = run(cwd.path(), json::array({json::array({"echo", {{"message", "through the gateway"}}}),
                                            json::array({"add", {{"a", 1}, {"b", 2}}})}),
                   "--tools-allow echo", "@modelcontextprotocol/server-everything/dist/index.js stdio");
    INFO("client output: " << out.dump());
    REQUIRE(out.is_object());
    CHECK(out["tools"] == json::array({"echo"}));
    CHECK_THAT(out["results"][0]["result"].dump(), Catch::Contains("through the gateway"));
    CHECK(out["results"][1]["error"]["code"] == -32602);
    CHECK_THAT(out["results"][1]["error"]["message"].get<std::string>(), Catch::Contains("hidden by corral"));
  }
  SECTION("two hundred calls through the policy, with their latency beside the transparent proxy's") {
    temp_dir cwd("corral-gateway-cwd-");
    auto calls = json::array({json::array({"echo", {{"message", "two hundred calls"}}, 200})});
    const std::string server = "@modelcontextprotocol/server-everything/dist/index.js stdio";
    auto plain = run(cwd.path(), calls, "", server);
    auto audit = cwd / "audit.jsonl";
    auto gated = run(cwd.path(), calls, "--tools-allow echo --tool-rule 'echo.message~^[a-z ]+$' --audit " + audit, server);
    REQUIRE(gated.is_object());
    REQUIRE(gated["results"].size() == 200);
    std::size_t answered = 0;
    for (auto& r : gated["results"]) answered += r.contains("result");
    CHECK(answered == 200);
    std::size_t forwarded_calls = 0;
    for (auto& l : audit_lines(audit)) forwarded_calls += l["method"] == "tools/call" && l["direction"] == "client";
    CHECK(forwarded_calls == 200);
    WARN("200 echo calls with the official SDK client: median " << gated["median_us"] << " us through the policy, "
                                                                << plain["median_us"] << " us transparent");
  }
  SECTION("filesystem: a path rule allows the project and refuses what lies outside it") {
    temp_dir base("corral-gateway-project-");
    ::chmod(base.path().c_str(), 0755);
    std::string project = base / "project";
    fs::create_directories(project);
    std::ofstream(project + "/README.md") << "the project\n";
    ::chmod(project.c_str(), 0755);
    ::chmod((project + "/README.md").c_str(), 0644);
    std::ofstream(base / "secret.txt") << "not for the server\n";
    auto out = run(project,
                   json::array({json::array({"read_text_file", {{"path", project + "/README.md"}}}),
                                json::array({"read_text_file", {{"path", base / "secret.txt"}}})}),
                   "--here --tool-rule '*.path^" + project + "'",
                   "@modelcontextprotocol/server-filesystem/dist/index.js " + project);
    INFO("client output: " << out.dump());
    REQUIRE(out.is_object());
    CHECK_THAT(out["results"][0]["result"].dump(), Catch::Contains("the project"));
    CHECK(out["results"][1]["error"]["code"] == -32001);
    CHECK_THAT(out["results"][1]["error"]["message"].get<std::string>(), Catch::Contains("is refused"));
  }
}

} // namespace corral
