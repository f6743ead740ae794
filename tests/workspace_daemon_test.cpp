// Workspaces through `corral serve`: the workspace.* methods and exec's `workspace` param
// from a raw JSON-RPC client, a workspace found again from another connection, and another
// uid's workspace unreachable however it is named.
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "proto/jsonrpc/jsonrpc.hpp"
#include "proto/jsonrpc/result_json.hpp"
#include "tests/daemon_process.hpp"

using namespace corral;
using namespace corral::testing;
using nlohmann::json;

namespace {

// One call and its reply (notifications on the way are dropped).
json ask(line_client& c, int id, const std::string& method, const json& params) {
  c.call(id, method, params);
  auto reply = c.reply(id);
  INFO(method << " " << params.dump() << " -> " << reply.dump());
  REQUIRE(!reply.is_null());
  return reply;
}

json result_of(line_client& c, int id, const std::string& method, const json& params) {
  auto reply = ask(c, id, method, params);
  INFO(method << " -> " << reply.dump());
  REQUIRE(reply.contains("result"));
  return reply["result"];
}

// The replies to calls sent together, by id, in whatever order they come.
std::map<int, json> replies_to(line_client& c, int first, int count) {
  std::map<int, json> got;
  while (static_cast<int>(got.size()) < count) {
    auto m = c.next();
    if (m.is_null()) break;  // the socket's read bound: the test fails below, not hangs
    if (m.contains("id") && m["id"].is_number_integer() && !m.contains("method")) got[m["id"].get<int>()] = m;
  }
  for (int k = first; k < first + count; ++k) got.try_emplace(k, nullptr);
  return got;
}

int error_code(const json& reply) { return reply.contains("error") ? reply["error"].value("code", 0) : 0; }

} // namespace

TEST_CASE("workspace methods over the daemon: create, exec in it, files, changes and end", "[workspace][daemon]") {
  daemon_process d;
  line_client c(d.socket);
  auto made = result_of(c, 1, "workspace.create", {{"name", "build"}, {"idle_timeout", 600}});
  std::string id = made["workspace"];
  CHECK(id.rfind("w-", 0) == 0);
  CHECK(made["name"] == "build");
  CHECK(made["mount_at"] == "/work");
  CHECK(made["idle_timeout"] == 600.0);
  CHECK(made["not_enforced"].is_array());

  // Two execs, two processes: the second reads what the first wrote, by name or by id.
  auto first = result_of(c, 2, "exec", {{"argv", {"sh", "-c", "echo one > /work/a.txt && pwd"}}, {"workspace", "build"}});
  CHECK(first["exit_code"] == 0);
  CHECK(first["stdout"] == "/work\n");
  CHECK(first["workspace"] == id);
  auto second = result_of(c, 3, "exec", {{"argv", {"cat", "/work/a.txt"}}, {"workspace", id}});
  CHECK(second["stdout"] == "one\n");
  // cwd: where it starts, relative to /work (or absolute inside).
  auto there = result_of(c, 30, "exec", {{"argv", {"sh", "-c", "pwd; cat a.txt"}}, {"workspace", id}, {"cwd", "."}});
  CHECK(there["stdout"] == "/work\none\n");
  CHECK(error_code(ask(c, 31, "exec", {{"argv", {"pwd"}}, {"workspace", id}, {"cwd", 5}})) == rpc::kInvalidParams);

  // Bytes that are not UTF-8 go in and come out as base64, whole.
  std::string bytes("\xff\x00\x80zz", 5);
  auto written = result_of(c, 4, "workspace.files.write",
                           {{"workspace", id}, {"path", "/work/bin/b.bin"}, {"data_base64", base64_encode(bytes)},
                            {"parents", true}, {"mode", 0600}});
  CHECK(written["path"] == "/work/bin/b.bin");
  CHECK(written["size"] == 5);
  CHECK(written["mode"] == 0600);
  auto read = result_of(c, 5, "workspace.files.read", {{"workspace", id}, {"path", "bin/b.bin"}});
  REQUIRE(read.contains("data_base64"));
  CHECK(read["data_base64"] == base64_encode(bytes));
  CHECK(read["eof"] == true);
  auto listed = result_of(c, 6, "workspace.files.list", {{"workspace", id}, {"depth", 2}});
  std::vector<std::string> paths;
  for (auto& e : listed["entries"]) paths.push_back(e["path"]);
  CHECK(paths == std::vector<std::string>{"/work/a.txt", "/work/bin", "/work/bin/b.bin"});

  // Changes since creation carry each file's hash: the jail's own sha256sum agrees.
  auto changes = result_of(c, 7, "workspace.changes", {{"workspace", id}});
  REQUIRE(changes["changes"].size() == 3);
  CHECK(changes["changes"][0]["change"] == "added");
  CHECK(changes["changes"][0]["path"] == "/work/a.txt");
  auto sum = result_of(c, 8, "exec", {{"argv", {"sha256sum", "/work/a.txt"}}, {"workspace", id}});
  CHECK(sum["stdout"].get<std::string>().substr(0, 64) == changes["changes"][0]["sha256"]);
  CHECK(result_of(c, 9, "workspace.mark", {{"workspace", id}, {"label", "m1"}})["mark"] == "m1");
  result_of(c, 10, "workspace.files.move", {{"workspace", id}, {"from", "a.txt"}, {"to", "c.txt"}});
  auto since = result_of(c, 11, "workspace.changes", {{"workspace", id}, {"since", "m1"}});
  REQUIRE(since["changes"].size() == 2);
  CHECK(since["changes"][0]["path"] == "/work/a.txt");
  CHECK(since["changes"][0]["change"] == "removed");
  CHECK(since["changes"][1]["path"] == "/work/c.txt");

  // Another connection of the same uid finds it by name; a disconnect does not end it.
  c.close();
  line_client c2(d.socket);
  auto again = result_of(c2, 1, "workspace.inspect", {{"workspace", "build"}});
  CHECK(again["workspace"] == id);
  auto all = result_of(c2, 2, "workspace.list", json::object());
  REQUIRE(all["workspaces"].size() == 1);
  CHECK(all["workspaces"][0]["name"] == "build");

  // Bad calls are clear errors, and lose nothing.
  auto unknown = ask(c2, 3, "workspace.create", {{"nmae", "x"}});
  CHECK(error_code(unknown) == rpc::kInvalidParams);
  CHECK(unknown["error"]["message"].get<std::string>().find("nmae") != std::string::npos);
  auto escape = ask(c2, 4, "workspace.files.read", {{"workspace", id}, {"path", "../../etc/passwd"}});
  CHECK(error_code(escape) != 0);
  CHECK(!escape.contains("result"));
  CHECK(error_code(ask(c2, 5, "workspace.files.chmod", {{"workspace", id}, {"path", "c.txt"}})) == rpc::kMethodNotFound);
  CHECK(error_code(ask(c2, 6, "workspace.files.read", {{"workspace", id}, {"path", "nothing"}})) == rpc::kNotFound);
  CHECK(error_code(ask(c2, 7, "workspace.files.write", {{"workspace", id}, {"path", "x"}})) == rpc::kInvalidParams);
  CHECK(error_code(ask(c2, 8, "exec", {{"argv", {"true"}}, {"workspace", ""}})) == rpc::kInvalidParams);
  CHECK(result_of(c2, 9, "workspace.files.read", {{"workspace", id}, {"path", "c.txt"}})["data"] == "one\n");

  auto ended = result_of(c2, 10, "workspace.end", {{"workspace", id}});
  CHECK(ended["ended"] == true);
  CHECK(ended["files_kept"] == false);
  CHECK(error_code(ask(c2, 11, "workspace.inspect", {{"workspace", id}})) == rpc::kNotFound);
  CHECK(error_code(ask(c2, 12, "exec", {{"argv", {"true"}}, {"workspace", id}})) == rpc::kNotFound);
}

TEST_CASE("another uid's workspace answers as one that does not exist, however it is named", "[workspace][daemon]") {
  if (::geteuid() != 0) {
    WARN("skipped: a second uid needs root (setuid)");
    return;
  }
  daemon_process d({"--allow-uid", "0", "--allow-uid", "65534"});
  // Wide file modes, so only the daemon's own check stands between uid 65534 and the workspace.
  ::chmod(d.dir.path().c_str(), 0755);
  ::chmod(d.socket.c_str(), 0666);
  line_client owner(d.socket);
  auto made = result_of(owner, 1, "workspace.create", {{"name", "secret"}});
  std::string id = made["workspace"];
  result_of(owner, 2, "workspace.files.write", {{"workspace", id}, {"path", "key"}, {"data", "hunter2\n"}});

  // The other uid's calls, one reply per line back through a pipe.
  int pipefd[2];
  REQUIRE(::pipe(pipefd) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(pipefd[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    int fd = connect_to(d.socket);
    if (fd < 0) ::_exit(3);
    std::vector<json> calls = {
        {{"method", "workspace.inspect"}, {"params", {{"workspace", "secret"}}}},
        {{"method", "workspace.inspect"}, {"params", {{"workspace", id}}}},
        {{"method", "workspace.files.read"}, {"params", {{"workspace", id}, {"path", "key"}}}},
        {{"method", "exec"}, {"params", {{"argv", {"cat", "/work/key"}}, {"workspace", id}}}},
        {{"method", "workspace.changes"}, {"params", {{"workspace", id}}}},
        {{"method", "workspace.end"}, {"params", {{"workspace", id}}}},
        {{"method", "workspace.list"}, {"params", json::object()}},
        {{"method", "workspace.create"}, {"params", {{"name", "secret"}}}},
    };
    std::string in;
    int n = 1;
    for (auto& call : calls) {
      auto line = json{{"jsonrpc", "2.0"}, {"id", n++}, {"method", call["method"]}, {"params", call["params"]}}.dump() + "\n";
      if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) ::_exit(4);
      // Read to this call's reply (exec sends notifications first).
      for (;;) {
        auto nl = in.find('\n');
        if (nl == std::string::npos) {
          char buf[65536];
          auto got = ::read(fd, buf, sizeof buf);
          if (got <= 0) ::_exit(5);
          in.append(buf, static_cast<std::size_t>(got));
          continue;
        }
        auto msg = in.substr(0, nl + 1);
        in.erase(0, nl + 1);
        if (msg.find("\"method\"") != std::string::npos) continue;
        if (::write(pipefd[1], msg.data(), msg.size()) < 0) ::_exit(6);
        break;
      }
    }
    ::_exit(0);
  }
  ::close(pipefd[1]);
  std::string got;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  std::vector<json> replies;
  std::size_t at = 0;
  while (at < got.size()) {
    auto nl = got.find('\n', at);
    replies.push_back(json::parse(got.substr(at, nl - at)));
    at = nl + 1;
  }
  REQUIRE(replies.size() == 8);
  // Each attempt ran and got "not found", worded as for a workspace that never existed.
  for (int k : {0, 1, 2, 3, 4, 5}) {
    INFO(replies[k].dump());
    CHECK(error_code(replies[k]) == rpc::kNotFound);
    CHECK(replies[k].dump().find("hunter2") == std::string::npos);
  }
  CHECK(replies[1]["error"]["message"] == "no workspace '" + id + "' here");
  CHECK(replies[6]["result"]["workspaces"].empty());
  // Names are per owner: its own "secret" is another workspace.
  REQUIRE(replies[7].contains("result"));
  CHECK(replies[7]["result"]["workspace"] != id);

  // The owner's workspace and file are untouched.
  auto still = result_of(owner, 3, "workspace.files.read", {{"workspace", "secret"}, {"path", "key"}});
  CHECK(still["data"] == "hunter2\n");
  CHECK(result_of(owner, 4, "workspace.list", json::object())["workspaces"].size() == 1);
  result_of(owner, 5, "workspace.end", {{"workspace", id}});
}

TEST_CASE("a daemon killed mid-exec comes back with the workspace and its files, and nothing of the exec left",
          "[workspace][daemon]") {
  daemon_process d;
  std::string id;
  std::string execution;
  {
    line_client c(d.socket);
    id = result_of(c, 1, "workspace.create", {{"name", "survivor"}})["workspace"];
    result_of(c, 2, "workspace.files.write", {{"workspace", id}, {"path", "kept.txt"}, {"data", "before the crash\n"}});
    c.call(3, "exec", {{"argv", {"sh", "-c", "echo partial > /work/partial.txt; exec sleep 30.6161"}}, {"workspace", id}});
    for (auto m = c.next(); !m.is_null(); m = c.next())
      if (m.value("method", "") == "exec.started") {
        execution = m["params"]["execution_id"];
        break;
      }
    REQUIRE_FALSE(execution.empty());
    REQUIRE(eventually([] { return !with_arg("30.6161").empty(); }));
    // A server left running and a terminal the workspace keeps, on another connection.
    line_client other(d.socket);
    result_of(other, 1, "exec",
              {{"argv", {"sh", "-c", "sleep 30.7272 &"}}, {"workspace", id}, {"leave_running", true}});
    result_of(other, 2, "session.open", {{"kind", "terminal"}, {"argv", {"sleep", "30.8383"}}, {"workspace", id}});
    REQUIRE(eventually([] { return !with_arg("30.7272").empty() && !with_arg("30.8383").empty(); }));
    // The journal is written as they come and go: a restart reads what it said last.
    REQUIRE(eventually([&] {
      auto text = read_text(d.dir / ("workspaces/" + id + "/running.json"));
      return text.find("30.7272") != std::string::npos && text.find("30.8383") != std::string::npos;
    }));
    d.stop(SIGKILL);
  }
  d.start();  // the same state dir: the start sweeps what the killed daemon left
  for (const char* marker : {"30.6161", "30.7272", "30.8383"})
    CHECK(eventually([&] { return with_arg(marker).empty(); }));
  CHECK(cgroups_of(execution).empty());
  CHECK(cgroups_of(id).empty());
  line_client c(d.socket);
  auto back = result_of(c, 1, "workspace.inspect", {{"workspace", "survivor"}});
  CHECK(back["workspace"] == id);
  CHECK(back["running"] == 0);  // the killed exec does not count as running
  CHECK(back["terminals"] == 0);
  // What ran is reported lost, never restarted.
  REQUIRE(back.contains("lost"));
  CHECK(back["lost_at"].get<std::int64_t>() > 0);
  std::map<std::string, std::string> lost;
  for (auto& item : back["lost"]) lost[item["kind"]] += item.dump();
  INFO(back["lost"].dump());
  CHECK_THAT(lost["exec"], Catch::Contains("30.6161"));
  CHECK_THAT(lost["process"], Catch::Contains("sleep 30.7272"));
  CHECK_THAT(lost["terminal"], Catch::Contains("30.8383"));
  CHECK(result_of(c, 2, "workspace.files.read", {{"workspace", id}, {"path", "kept.txt"}})["data"] == "before the crash\n");
  CHECK(result_of(c, 3, "workspace.files.read", {{"workspace", id}, {"path", "partial.txt"}})["data"] == "partial\n");
  // Usable at once: a new exec runs in it, and it can be ended (nothing holds it).
  CHECK(result_of(c, 4, "exec", {{"argv", {"cat", "kept.txt"}}, {"workspace", id}})["stdout"] == "before the crash\n");
  CHECK(result_of(c, 5, "workspace.end", {{"workspace", id}})["ended"] == true);
}

TEST_CASE("twenty workspaces at once each keep their own files within their own limits", "[workspace][daemon]") {
  constexpr int kCount = 20;
  temp_dir config_dir{"corral-ws-twenty-"};
  {
    std::ofstream f(config_dir / "corral.toml");
    f << "[sandbox]\ntier = \"landlock\"\n[sandbox.workspaces]\nmax_per_owner = " << kCount << "\nmax_total = " << kCount
      << "\n";
  }
  daemon_process d({"--config", config_dir / "corral.toml"});
  line_client c(d.socket);
  std::vector<std::string> ids;
  for (int k = 0; k < kCount; ++k)
    ids.push_back(result_of(c, k + 1, "workspace.create",
                            {{"name", "ws" + std::to_string(k)}, {"memory_limit", 64 << 20}, {"pids_limit", 32}})["workspace"]);
  // Past the cap: refused, saying which setting holds it.
  auto over = ask(c, 100, "workspace.create", json::object());
  CHECK(error_code(over) == rpc::kLimitExceeded);
  CHECK(over["error"]["message"].get<std::string>().find("max_per_owner") != std::string::npos);

  // All at once: each writes its own name and sees only its own files.
  for (int k = 0; k < kCount; ++k)
    c.call(200 + k, "exec",
           {{"argv", {"sh", "-c", "echo ws" + std::to_string(k) + " > /work/me && cat /work/me && ls /work | wc -l"}},
            {"workspace", ids[k]},
            {"stream", false}});
  auto first = replies_to(c, 200, kCount);
  for (int k = 0; k < kCount; ++k) {
    auto& r = first[200 + k];
    INFO(r.dump());
    REQUIRE(r.contains("result"));
    CHECK(r["result"]["exit_code"] == 0);
    CHECK(r["result"]["stdout"] == "ws" + std::to_string(k) + "\n1\n");  // its own file, and only it
    CHECK(r["result"]["workspace"] == ids[k]);
    CHECK(r["result"]["usage"]["peak_memory_bytes"].get<std::uint64_t>() <= (64u << 20));
  }
  // Each workspace's memory ceiling holds for what runs in it: 200 MiB asked, killed at 64.
  for (int k = 0; k < kCount; ++k)
    c.call(600 + k, "exec",
           {{"argv", {"python3", "-c", "b = bytearray(200 << 20); print('allocated')"}}, {"workspace", ids[k]}, {"stream", false}});
  auto second = replies_to(c, 600, kCount);
  for (int k = 0; k < kCount; ++k) {
    auto& r = second[600 + k];
    INFO(r.dump());
    REQUIRE(r.contains("result"));
    CHECK(r["result"]["verdict"] == "out_of_memory");
    CHECK(r["result"]["stdout"] == "");
  }
  auto wider = ask(c, 300, "exec", {{"argv", {"true"}}, {"workspace", ids[0]}, {"memory_limit", 128 << 20}});
  CHECK(error_code(wider) == rpc::kRefused);
  for (int k = 0; k < kCount; ++k) result_of(c, 400 + k, "workspace.end", {{"workspace", ids[k]}});
  CHECK(result_of(c, 500, "workspace.list", json::object())["workspaces"].empty());
}

TEST_CASE("a stdio session in a workspace works on its files, and holds the workspace until it ends", "[workspace][daemon]") {
  daemon_process d;
  line_client c(d.socket);
  std::string id = result_of(c, 1, "workspace.create", {{"name", "served"}})["workspace"];
  result_of(c, 2, "workspace.files.write", {{"workspace", id}, {"path", "note"}, {"data", "from the files api\n"}});
  // A line names a file: the session answers with its content and notes the name.
  auto opened = result_of(c, 3, "session.open",
                          {{"kind", "stdio"},
                           {"argv", {"sh", "-c", "while read f; do cat \"$f\"; echo \"$f\" >> asked; done"}},
                           {"workspace", "served"}});
  std::string session = opened["session"];
  std::vector<json> notes;
  c.call(4, "session.write", {{"session", session}, {"data", "note"}});
  CHECK(c.reply(4, &notes)["result"]["written"] == true);
  std::string answer;
  for (auto& n : notes)
    if (n.value("method", "") == "session.output") answer = n["params"]["data"];
  while (answer.empty()) {
    auto m = c.next();
    REQUIRE(!m.is_null());
    if (m.value("method", "") == "session.output") answer = m["params"]["data"];
  }
  CHECK(answer == "from the files api");
  // Held while the session runs: it cannot be ended under it.
  auto busy = ask(c, 5, "workspace.end", {{"workspace", id}});
  CHECK(error_code(busy) == rpc::kRefused);
  CHECK(result_of(c, 6, "workspace.inspect", {{"workspace", id}})["running"] == 1);
  c.call(7, "session.close", {{"session", session}});
  for (auto m = c.next(); !m.is_null(); m = c.next())
    if (m.value("method", "") == "session.ended") break;
  CHECK(result_of(c, 8, "workspace.files.read", {{"workspace", id}, {"path", "asked"}})["data"] == "note\n");
  // Given back once the session is gone (the supervisor hears of it after the client may).
  int next_id = 9;
  CHECK(eventually([&] { return result_of(c, next_id++, "workspace.inspect", {{"workspace", id}})["running"] == 0; }));
  CHECK(result_of(c, 100, "workspace.end", {{"workspace", id}})["ended"] == true);
  // Another uid's or a missing workspace: the session is not opened.
  CHECK(error_code(ask(c, 101, "session.open", {{"kind", "terminal"}, {"workspace", id}})) == rpc::kNotFound);
}
