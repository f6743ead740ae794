// The egress proxy for sessions: a stdio session (an MCP server) and a terminal in
// allowlist mode reach an allowed name through the same proxy an execution gets, are
// refused the rest, and report each connection live (session_network) and in the end
// report's audit. Through a daemon, `--allow-net` with --connect narrows the daemon's list.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "actors/session_client.hpp"
#include "tests/egress_fixture.hpp"
#include "tests/served_daemon.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

// Fetches each URL it reads on stdin and answers one line: the body, or ERR and the code.
const char* kFetcher =
    "import sys, urllib.request as u\n"
    "for line in sys.stdin:\n"
    "    try:\n"
    "        print(u.urlopen(line.strip(), timeout=10).read().decode().strip(), flush=True)\n"
    "    except Exception as e:\n"
    "        print('ERR', getattr(e, 'code', e), flush=True)\n";

const network_event* event_for(const std::vector<network_event>& events, const std::string& host) {
  for (auto& e : events)
    if (e.host == host) return &e;
  return nullptr;
}

} // namespace

TEST_CASE("a stdio session reaches an allowed name through its proxy and reports each connection", "[egress][session]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kPython)) { WARN("skipped: needs " << kPython); return; }
  stub_server app("hello from app\n");
  auto port = std::to_string(app.port());
  test_runtime rt(egress_profile("allow = [\"app.test:" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                                 {{"app.test", {"127.0.0.1"}}, {"other.test", {"127.0.0.1"}}}),
                  false);
  session_request req;
  req.argv = {kPython, "-c", kFetcher};
  auto s = session_client::open(*rt.rt, req);
  REQUIRE(s);
  REQUIRE((*s)->send("http://app.test:" + port + "/allowed"));
  auto allowed = (*s)->receive(20s);
  REQUIRE(allowed);
  CHECK(*allowed == "hello from app");
  REQUIRE((*s)->send("http://other.test:" + port + "/unlisted"));
  auto refused = (*s)->receive(20s);
  REQUIRE(refused);
  CHECK(*refused == "ERR 403");
  CHECK(app.hits() == 1);  // the attempt ran, and only the allowed one arrived
  (*s)->close();
  auto end = (*s)->wait_ended(20s);
  REQUIRE(end);
  CHECK(end->reason == session_end_reason::closed);
  // The end report's audit.
  REQUIRE(end->network);
  auto* ok = event_for(end->network->events, "app.test");
  auto* no = event_for(end->network->events, "other.test");
  REQUIRE(ok);
  REQUIRE(no);
  CHECK(ok->decision == "allowed");
  CHECK(ok->bytes_down > 0);
  CHECK(no->decision == "not_allowed");
  CHECK_THAT(no->reason, Catch::Contains("sandbox.network"));
  // The same records came live, before the end.
  REQUIRE(event_for((*s)->network(), "app.test"));
  REQUIRE(event_for((*s)->network(), "other.test"));
  CHECK(event_for((*s)->network(), "other.test")->decision == "not_allowed");
  s->reset();
  CHECK(tracked_after_settling(*rt.rt) == 0);
}

TEST_CASE("a stdio session's request narrows the allow-list and cannot widen it", "[egress][session]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kPython)) { WARN("skipped: needs " << kPython); return; }
  stub_server app("hello from app\n");
  auto port = std::to_string(app.port());
  test_runtime rt(egress_profile("allow = [\"app.test:" + port + "\", \"other.test:" + port + "\", \"127.0.0.1/32:" +
                                     port + "\"]\n",
                                 {{"app.test", {"127.0.0.1"}}, {"other.test", {"127.0.0.1"}}}),
                  false);
  session_request wide;
  wide.argv = {kPython, "-c", kFetcher};
  wide.network_allow = std::vector<std::string>{"pypi.org"};
  auto widened = session_client::open(*rt.rt, wide);
  REQUIRE_FALSE(widened);
  CHECK_THAT(widened.error().message, Catch::Contains("not covered"));

  session_request narrow = wide;
  narrow.network_allow = std::vector<std::string>{"app.test:" + port, "127.0.0.1/32:" + port};
  auto s = session_client::open(*rt.rt, narrow);
  REQUIRE(s);
  REQUIRE((*s)->send("http://other.test:" + port + "/"));  // in the profile, not in the request
  auto refused = (*s)->receive(20s);
  REQUIRE(refused);
  CHECK(*refused == "ERR 403");
  REQUIRE((*s)->send("http://app.test:" + port + "/"));
  auto allowed = (*s)->receive(20s);
  REQUIRE(allowed);
  CHECK(*allowed == "hello from app");
  CHECK(app.hits() == 1);
  (*s)->close();
  REQUIRE((*s)->wait_ended(20s));
}

TEST_CASE("a terminal reaches an allowed name through its proxy and its end carries the audit", "[egress][terminal]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kCurl)) { WARN("skipped: needs " << kCurl); return; }
  stub_server app("hello from app\n");
  auto port = std::to_string(app.port());
  test_runtime rt(egress_profile("allow = [\"app.test:" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                                 {{"app.test", {"127.0.0.1"}}}),
                  false);
  terminal_request req;
  req.argv = {"/bin/sh", "-c",
              std::string(kCurl) + " -sS -m 10 http://app.test:" + port + "/t; " + kCurl +
                  " -s -o /dev/null -w 'code %{http_code}\\n' -m 10 http://unlisted.test:" + port + "/"};
  req.echo = false;
  auto h = rt.rt->open_terminal(req);
  REQUIRE(h);
  caf::scoped_actor self{rt.rt->system()};
  std::string seen;
  self->request(h->actor, 10s, reattach_atom::value, caf::actor_cast<caf::actor>(self))
      .receive([&](std::string& scrollback) { seen += scrollback; }, [&](caf::error& e) { FAIL(to_string(e)); });
  std::vector<network_event> live;
  std::optional<session_ended> ended;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!ended && std::chrono::steady_clock::now() < deadline)
    self->receive([&](terminal_output& o) { seen += o.bytes; }, [&](session_network& n) { live.push_back(n.event); },
                  [&](session_ended& e) { ended = e; }, caf::after(1s) >> [] {});
  REQUIRE(ended);
  CHECK_THAT(seen, Catch::Contains("hello from app"));
  CHECK_THAT(seen, Catch::Contains("code 403"));
  CHECK(app.hits() == 1);
  REQUIRE(ended->network);
  REQUIRE(event_for(ended->network->events, "app.test"));
  CHECK(event_for(ended->network->events, "app.test")->decision == "allowed");
  REQUIRE(event_for(ended->network->events, "unlisted.test"));
  CHECK(event_for(ended->network->events, "unlisted.test")->decision == "not_allowed");
  CHECK(event_for(live, "app.test"));
  CHECK(tracked_after_settling(*rt.rt) == 0);
}

TEST_CASE("through a daemon, --allow-net narrows its list for mcp and run, and refusals are said on stderr",
          "[egress][daemon]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kCurl)) { WARN("skipped: needs " << kCurl); return; }
  stub_server one("one\n"), two("two\n");
  auto p1 = std::to_string(one.port()), p2 = std::to_string(two.port());
  temp_dir dir;
  // IP literals: the daemon's profile has no test resolver. `--noproxy ''` makes curl use the
  // proxy for 127.0.0.1 too (the jail's NO_PROXY names it, for the jail's own loopback).
  {
    std::ofstream toml(dir / "corral.toml");
    toml << "[sandbox]\ntier = \"landlock\"\n[sandbox.network]\nmode = \"allowlist\"\nallow = [\"127.0.0.1/32:" << p1
         << "\", \"127.0.0.1/32:" << p2 << "\"]\n";
  }
  served_daemon d({"--config", dir / "corral.toml"});
  auto shell = [](const std::string& command, std::string& err_path) {
    std::string out;
    FILE* f = ::popen((command + " 2>" + err_path).c_str(), "r");
    REQUIRE(f);
    char buf[4096];
    while (auto n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
    int status = ::pclose(f);
    return std::pair<int, std::string>{WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  };
  auto read_file = [](const std::string& path) {
    std::ifstream f(path);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  std::string err = dir / "err";
  std::string fetch = std::string(kCurl) + " -s -o /dev/null -w \"%{http_code}\\n\" -m 10 --noproxy \"\" \"$u\"";
  auto mcp = shell("printf 'http://127.0.0.1:" + p1 + "/\\nhttp://127.0.0.1:" + p2 + "/\\n' | " + CORRAL_TEST_CLI +
                       " mcp --connect " + d.socket + " --allow-net 127.0.0.1/32:" + p1 +
                       " -- /bin/sh -c 'while read u; do " + fetch + "; done'",
                   err);
  INFO("stderr: " << read_file(err));
  CHECK(mcp.first == 0);
  CHECK(mcp.second == "200\n403\n");
  CHECK(one.hits() == 1);
  CHECK(two.hits() == 0);
  CHECK_THAT(read_file(err), Catch::Contains("corral: network: 127.0.0.1:" + p2 + " not_allowed"));

  auto run = shell(std::string(CORRAL_TEST_CLI) + " run --json --connect " + d.socket + " --allow-net 127.0.0.1/32:" + p2 +
                       " -- " + kCurl + " -sS -m 10 --noproxy '' http://127.0.0.1:" + p2 + "/",
                   err);
  CHECK(run.first == 0);
  auto j = nlohmann::json::parse(run.second, nullptr, false);
  REQUIRE(j.is_object());
  CHECK(j["stdout"] == "two\n");
  REQUIRE(j["network"].is_array());
  REQUIRE(j["network"].size() == 1);
  CHECK(j["network"][0]["decision"] == "allowed");
  CHECK(j["network"][0]["rule"] == "127.0.0.1/32:" + p2);

  auto widened = shell(std::string(CORRAL_TEST_CLI) + " run --connect " + d.socket +
                           " --allow-net pypi.org -- /bin/true",
                       err);
  CHECK(widened.first == 125);
  CHECK_THAT(read_file(err), Catch::Contains("not covered"));
}
