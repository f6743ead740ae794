// The E2B gateway (proto/e2b/) over raw HTTP, without the SDK: what the SDK tests cannot
// reach or would pass over — keys refused and revoked while the daemon runs, an access
// token per sandbox, the timeout ending a sandbox and its processes, a process that
// outlives the client that started it, a client that stops reading slowing the process
// rather than filling the daemon, a daemon restart keeping the sandbox and its files, and
// what corral does not implement refused by name.
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "e2b_http_client.hpp"
#include "landlock_fixture.hpp"
#include "proto/e2b/api_keys.hpp"
#include "runtime_fixture.hpp"
#include "served_daemon.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {


struct gateway_daemon {
  temp_dir keys_dir{"corral-e2b-keys-"};
  std::string e2b_dir = keys_dir / "e2b";
  issued_key key, other;
  std::uint16_t port = free_tcp_port();
  std::unique_ptr<served_daemon> daemon;

  explicit gateway_daemon(const std::string& config = "") {
    std::vector<std::string> extra{"--e2b-listen", "127.0.0.1:" + std::to_string(port), "--e2b-dir", e2b_dir};
    if (!config.empty()) {
      std::ofstream(keys_dir / "corral.toml") << config;
      extra.insert(extra.end(), {"--config", keys_dir / "corral.toml"});
    }
    auto k = add_key(e2b_dir, "first");
    auto o = add_key(e2b_dir, "second");
    REQUIRE(k);
    REQUIRE(o);
    key = *k;
    other = *o;
    daemon = std::make_unique<served_daemon>(extra);
    REQUIRE(eventually([&] { return http_call(port, "GET", "/health").status == 204; }, 20s));
  }

  http_reply control(const std::string& method, const std::string& path, const json& body = nullptr,
                     const std::string& api_key = "") {
    std::map<std::string, std::string> h{{"X-API-KEY", api_key.empty() ? key.key : api_key}};
    if (!body.is_null()) h["Content-Type"] = "application/json";
    return http_call(port, method, path, h, body.is_null() ? "" : body.dump());
  }

  // A sandbox: its id and access token.
  std::pair<std::string, std::string> create(const json& body = json::object()) {
    auto r = control("POST", "/v2/sandboxes", body);
    REQUIRE(r.status == 201);
    auto j = r.json();
    return {j["sandboxID"].get<std::string>(), j["envdAccessToken"].get<std::string>()};
  }

  std::map<std::string, std::string> envd_headers(const std::pair<std::string, std::string>& sb,
                                                  const std::string& type = "application/json") {
    return {{"E2b-Sandbox-Id", sb.first}, {"X-Access-Token", sb.second}, {"Content-Type", type},
            {"Connect-Protocol-Version", "1"}};
  }

  http_reply rpc(const std::pair<std::string, std::string>& sb, const std::string& method, const json& body) {
    return http_call(port, "POST", "/" + method, envd_headers(sb), body.dump());
  }

  // A stream call answered whole (its end comes by itself).
  http_reply stream(const std::pair<std::string, std::string>& sb, const std::string& method, const json& body) {
    return http_call(port, "POST", "/" + method, envd_headers(sb, "application/connect+json"), envelope(body.dump()));
  }

  // Starts `command` with bash -c on a connection the caller reads (or does not).
  std::unique_ptr<http_conn> start(const std::pair<std::string, std::string>& sb, const std::string& command,
                                   std::map<std::string, std::string> extra = {}) {
    auto c = std::make_unique<http_conn>(port);
    auto h = envd_headers(sb, "application/connect+json");
    h.insert(extra.begin(), extra.end());
    json m = {{"process", {{"cmd", "/bin/bash"}, {"args", {"-c", command}}}}};
    REQUIRE(c->send("POST", "/process.Process/Start", h, envelope(m.dump())));
    return c;
  }

  std::size_t processes(const std::pair<std::string, std::string>& sb) {
    return rpc(sb, "process.Process/List", json::object()).json()["processes"].size();
  }
};

std::string stdout_of(const std::vector<json>& frames) {
  std::string out;
  for (auto& f : frames)
    if (f.contains("event") && f["event"].contains("data") && f["event"]["data"].contains("stdout")) {
      auto bytes = base64_decode(f["event"]["data"]["stdout"].get<std::string>());
      out += bytes ? *bytes : std::string("?");
    }
  return out;
}

} // namespace

TEST_CASE("an E2B key is refused when wrong or revoked, and sees only its own sandboxes", "[e2b][landlock]") {
  REQUIRE_LANDLOCK();
  gateway_daemon g;
  CHECK(g.control("GET", "/v2/sandboxes", nullptr, "e2b_0000").status == 401);
  CHECK(http_call(g.port, "GET", "/v2/sandboxes").status == 401);
  auto sb = g.create({{"metadata", {{"who", "first"}}}});
  // The other key: the sandbox does not exist for it, in every verb.
  CHECK(g.control("GET", "/sandboxes/" + sb.first, nullptr, g.other.key).status == 404);
  CHECK(g.control("DELETE", "/sandboxes/" + sb.first, nullptr, g.other.key).status == 404);
  CHECK(g.control("POST", "/sandboxes/" + sb.first + "/timeout", {{"timeout", 60}}, g.other.key).status == 404);
  CHECK(g.control("GET", "/v2/sandboxes", nullptr, g.other.key).json().size() == 0);
  auto mine = g.control("GET", "/v2/sandboxes?metadata=who%3Dfirst");
  REQUIRE(mine.json().size() == 1);
  CHECK(mine.json()[0]["sandboxID"] == sb.first);
  CHECK(g.control("GET", "/v2/sandboxes?metadata=who%3Dnobody").json().size() == 0);
  // envd: the sandbox's own token only; the API key is not one.
  auto other_token = g.rpc({sb.first, g.key.key}, "process.Process/List", json::object());
  CHECK(other_token.status == 401);
  CHECK(other_token.json()["code"] == "unauthenticated");
  CHECK(g.rpc(sb, "process.Process/List", json::object()).status == 200);
  // Revoked while the daemon runs: refused from the next call.
  REQUIRE(remove_key(g.e2b_dir, g.key.record.id));
  CHECK(g.control("GET", "/sandboxes/" + sb.first).status == 401);
  // Its sandbox ends at its timeout, not at once: its envd token still works until then.
  CHECK(g.rpc(sb, "process.Process/List", json::object()).status == 200);
}

TEST_CASE("E2B requests corral cannot honour are refused by name, never served silently", "[e2b][landlock]") {
  REQUIRE_LANDLOCK();
  gateway_daemon g;
  auto refused = [&](const json& body, const char* words) {
    auto r = g.control("POST", "/v2/sandboxes", body);
    INFO(body.dump() << " -> " << r.body);
    CHECK(r.status == 400);
    CHECK_THAT(r.json().value("message", std::string()), Catch::Contains(words));
  };
  refused({{"templateID", "python-data"}}, "template 'python-data' is not served");
  refused({{"autoPause", true}}, "autoPause");
  refused({{"network", {{"allowOut", {"1.1.1.1"}}}}}, "network rules per sandbox");
  refused({{"timeout", 999999999}}, "more than this daemon allows");
  refused({{"timeout", 0}}, "at least 1");
  refused({{"metadata", {{"k", 1}}}}, "metadata.k must be a string");
  // Wrong JSON types anywhere: a clear 400, and the gateway serves on.
  refused({{"templateID", 5}}, "malformed request");
  refused({{"autoPause", "yes"}}, "malformed request");
  auto sb = g.create();
  auto bad_start = g.rpc(sb, "process.Process/List", {{"process", 5}});
  CHECK(bad_start.status == 200);  // List takes no fields; extra ones are ignored
  auto bad_signal = g.rpc(sb, "process.Process/SendSignal", {{"process", {{"pid", "one"}}}, {"signal", 9}});
  CHECK(bad_signal.status / 100 == 4);
  CHECK(g.rpc(sb, "process.Process/List", json::object()).status == 200);
  auto watch = g.stream(sb, "filesystem.Filesystem/WatchDir", {{"path", "/home/user"}, {"includeEntry", true}});
  // A stream call answers in its end frame, with status 200.
  CHECK(watch.status == 200);
  auto frames = watch.frames();
  REQUIRE(frames.size() == 1);
  CHECK(frames[0]["error"]["code"] == "unimplemented");
  CHECK(g.rpc(sb, "filesystem.Filesystem/CreateWatcher", {{"path", "/home/user"}}).json()["code"] == "unimplemented");
  auto root = g.rpc(sb, "filesystem.Filesystem/Stat", {{"path", "/etc/passwd"}});
  CHECK(root.status == 400);
  CHECK(root.json()["code"] == "invalid_argument");
  auto as_root = http_call(g.port, "GET", "/files?path=a.txt&username=root", g.envd_headers(sb));
  CHECK(as_root.status == 400);
  CHECK_THAT(as_root.body, Catch::Contains("one user"));
  CHECK(g.control("GET", "/sandboxes/" + sb.first + "/metrics").status == 501);
  // A sandbox that is not running: 502 as E2B's proxy says it; a stream says "unavailable"
  // in its end frame (the SDK's SandboxNotFoundError).
  CHECK(http_call(g.port, "GET", "/files?path=x", {{"E2b-Sandbox-Id", "w-000000000000"}}).status == 502);
  auto gone = http_call(g.port, "POST", "/process.Process/Start", {{"E2b-Sandbox-Id", "w-000000000000"}}, "");
  CHECK(gone.status == 200);
  REQUIRE(gone.frames().size() == 1);
  CHECK(gone.frames()[0]["error"]["code"] == "unavailable");
}

TEST_CASE("an E2B process outlives the client that started it, and the sandbox's timeout ends both",
          "[e2b][landlock]") {
  REQUIRE_LANDLOCK();
  gateway_daemon g;
  // Long enough to connect again under a loaded machine, short enough to wait for.
  auto sb = g.create({{"timeout", 8}});
  {
    auto c = g.start(sb, "echo started; sleep 60");
    std::this_thread::sleep_for(300ms);
  }  // the client hangs up mid-stream
  REQUIRE(eventually([&] { return g.processes(sb) == 1; }, 5s));
  std::this_thread::sleep_for(1s);
  CHECK(g.processes(sb) == 1);  // still running with nobody listening
  // A Connect finds it again: the start event first.
  http_conn again(g.port);
  json sel = {{"process", {{"pid", 1}}}};
  REQUIRE(again.send("POST", "/process.Process/Connect", g.envd_headers(sb, "application/connect+json"),
                     envelope(sel.dump())));
  // The timeout (8 s) ends the sandbox: the process's stream ends, then the sandbox is gone.
  auto reply = again.read_reply(20s);
  auto frames = reply.frames();
  REQUIRE(frames.size() >= 3);
  CHECK(frames.front()["event"]["start"]["pid"] == 1);
  CHECK(frames[frames.size() - 2]["event"].contains("end"));
  CHECK(frames.back() == json::object());
  REQUIRE(eventually([&] { return g.control("GET", "/sandboxes/" + sb.first).status == 404; }, 10s));
  CHECK(g.control("GET", "/v2/sandboxes").json().size() == 0);
}

TEST_CASE("a client that stops reading an E2B stream slows the command, and loses nothing when it reads again",
          "[e2b][landlock]") {
  REQUIRE_LANDLOCK();
  gateway_daemon g;
  auto sb = g.create();
  // 24 MB of output: base64 in JSON makes it 32 MB on the wire, far past every window.
  auto c = g.start(sb, "head -c 24000000 /dev/zero | tr '\\0' x; echo; echo done-writing >&2");
  std::this_thread::sleep_for(2s);
  // Unread, it waits: unblocked it would have finished well within the pause.
  CHECK(g.processes(sb) == 1);
  auto reply = c->read_reply(60s);
  REQUIRE(reply.status == 200);
  auto frames = reply.frames();
  auto out = stdout_of(frames);
  CHECK(out.size() == 24000001);
  CHECK(out.find_first_not_of('x') == 24000000);
  REQUIRE(frames.size() >= 2);
  CHECK(frames[frames.size() - 2]["event"]["end"]["exitCode"] == 0);
}

TEST_CASE("a restarted daemon keeps an E2B sandbox and its files, and says its processes are gone",
          "[e2b][landlock]") {
  REQUIRE_LANDLOCK();
  gateway_daemon g;
  auto sb = g.create({{"timeout", 120}});
  auto h = g.envd_headers(sb, "application/octet-stream");
  REQUIRE(http_call(g.port, "POST", "/files?path=kept.txt", h, "across the restart").status == 200);
  auto c = g.start(sb, "sleep 60");
  REQUIRE(eventually([&] { return g.processes(sb) == 1; }, 5s));
  c->hang_up();
  g.daemon->stop(SIGTERM);
  g.daemon->start();
  REQUIRE(eventually([&] { return g.control("GET", "/sandboxes/" + sb.first).status == 200; }, 20s));
  auto read = http_call(g.port, "GET", "/files?path=/home/user/kept.txt", g.envd_headers(sb));
  CHECK(read.status == 200);
  CHECK(read.body == "across the restart");
  CHECK(g.processes(sb) == 0);
  auto run = g.start(sb, "cat /home/user/kept.txt")->read_reply(20s);
  CHECK(stdout_of(run.frames()) == "across the restart");
  CHECK(g.control("DELETE", "/sandboxes/" + sb.first).status == 204);
  CHECK(g.control("GET", "/sandboxes/" + sb.first).status == 404);
}

TEST_CASE("an E2B directory watch reports the sandbox's changes and never follows a link it planted",
          "[e2b][landlock]") {
  REQUIRE_LANDLOCK();
  gateway_daemon g;
  auto sb = g.create();
  // The sandbox plants links to host directories and to its own.
  auto planted = g.start(sb, "mkdir -p w/real && ln -s /etc w/to-etc && ln -s real w/to-real && echo planted")->read_reply(20s);
  REQUIRE(stdout_of(planted.frames()) == "planted\n");
  for (const char* link : {"/home/user/w/to-etc", "w/to-real"}) {
    auto refused = g.stream(sb, "filesystem.Filesystem/WatchDir", {{"path", link}});
    INFO(link << ": " << refused.body);
    REQUIRE(refused.frames().size() == 1);
    CHECK(refused.frames()[0]["error"]["code"] == "not_found");
  }
  // A recursive watch of the directory: its changes come, the linked-to ones' never do.
  http_conn watch(g.port);
  auto h = g.envd_headers(sb, "application/connect+json");
  h["Connect-Timeout-Ms"] = "3000";
  REQUIRE(watch.send("POST", "/filesystem.Filesystem/WatchDir", h,
                     envelope(json{{"path", "/home/user/w"}, {"recursive", true}}.dump())));
  // The start event comes once every directory is watched: changes after it are seen.
  REQUIRE(watch.read_until_seen(R"({"start":{}})"));
  auto made = g.start(sb, "echo x > w/real/inside.txt && touch w/to-real/via-link.txt && echo done")->read_reply(20s);
  REQUIRE(stdout_of(made.frames()) == "done\n");
  auto events = watch.read_reply(20s).frames();  // the watch's timeout (3 s) ends it
  REQUIRE(events.size() >= 3);
  CHECK(events.front() == json{{"start", json::object()}});
  CHECK(events.back() == json::object());
  std::set<std::string> names;
  for (auto& e : events)
    if (e.contains("filesystem")) names.insert(e["filesystem"]["name"].get<std::string>());
  // Both files are in real/ (one reached through the link): reported under real/ only.
  CHECK(names.count("real/inside.txt") == 1);
  CHECK(names.count("real/via-link.txt") == 1);
  for (auto& n : names) CHECK(n.rfind("to-", 0) != 0);
}

TEST_CASE("an E2B template names narrower limits and an environment from the operator's config, and no more",
          "[e2b][landlock]") {
  REQUIRE_LANDLOCK();
  gateway_daemon g("[sandbox]\ntier = \"landlock\"\n[sandbox.workspaces.templates.small]\nmemory = \"256m\"\n"
                   "pids = 64\nenv = { MODE = \"small\", KEEP = \"template\" }\n");
  auto made = g.control("POST", "/v2/sandboxes", {{"templateID", "small"}, {"envVars", {{"KEEP", "caller"}}}});
  REQUIRE(made.status == 201);
  CHECK(made.json()["templateID"] == "small");
  CHECK(made.json()["memoryMB"] == 256);
  std::pair<std::string, std::string> sb{made.json()["sandboxID"], made.json()["envdAccessToken"]};
  // Its limits hold inside: the cgroup's, as the workspace's budget.
  auto run = g.start(sb, "echo $MODE $KEEP; cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || echo no-cgroup-view")->read_reply(20s);
  auto out = stdout_of(run.frames());
  CHECK(out.rfind("small caller\n", 0) == 0);  // the caller's envVars over the template's
  auto unknown = g.control("POST", "/v2/sandboxes", {{"templateID", "large"}});
  CHECK(unknown.status == 400);
  CHECK_THAT(unknown.json()["message"].get<std::string>(), Catch::Contains("'base', 'small'"));
  CHECK(g.control("DELETE", "/sandboxes/" + sb.first).status == 204);
}

TEST_CASE("an E2B pause freezes a quiet sandbox, and a connect resumes it with its files", "[e2b][landlock]") {
  REQUIRE_LANDLOCK();
  gateway_daemon g;
  auto sb = g.create();
  REQUIRE(http_call(g.port, "POST", "/files?path=note.txt", g.envd_headers(sb, "application/octet-stream"), "kept")
              .status == 200);
  // With a process running the pause is refused, and says why (not 409: the SDK reads that
  // as "already paused").
  auto busy = g.start(sb, "sleep 30");
  REQUIRE(eventually([&] { return g.processes(sb) == 1; }, 5s));
  auto refused = g.control("POST", "/sandboxes/" + sb.first + "/pause", json::object());
  CHECK(refused.status == 400);
  CHECK_THAT(refused.json()["message"].get<std::string>(), Catch::Contains("running"));
  CHECK(g.rpc(sb, "process.Process/SendSignal", {{"process", {{"pid", 1}}}, {"signal", "SIGNAL_SIGKILL"}}).status == 200);
  REQUIRE(eventually([&] { return g.processes(sb) == 0; }, 10s));
  busy.reset();
  REQUIRE(eventually([&] { return g.control("POST", "/sandboxes/" + sb.first + "/pause", json::object()).status == 204; }, 10s));
  CHECK(g.control("GET", "/sandboxes/" + sb.first).json()["state"] == "paused");
  // Paused, nothing starts in it: the attempt is made and refused.
  auto frozen = g.start(sb, "echo ran")->read_reply(20s);
  auto frames = frozen.frames();
  REQUIRE(!frames.empty());
  CHECK(frames.back().contains("error"));
  CHECK(stdout_of(frames).empty());
  auto resumed = g.control("POST", "/v2/sandboxes/" + sb.first + "/connect", json::object());
  CHECK(resumed.status == 201);
  CHECK(resumed.json()["state"] == "running");
  auto after = g.start(sb, "cat note.txt")->read_reply(20s);
  CHECK(stdout_of(after.frames()) == "kept");
}
