// A workspace's terminals through `corral serve`: a terminal outlives the client that
// opened it, shows its scrollback to whoever attaches again, keeps its process (asserted
// on the host's /proc), lets several clients view it while one writes, and ends with its
// workspace.
#include <dirent.h>
#include <fstream>
#include <regex>
#include <sstream>

#include <caf/all.hpp>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "proto/jsonrpc/jsonrpc.hpp"
#include "actors/atoms.hpp"
#include "tests/daemon_process.hpp"
#include "tests/landlock_fixture.hpp"
#include "tests/workspace_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

json ask(line_client& c, int id, const std::string& method, const json& params, std::vector<json>* notes = nullptr) {
  c.call(id, method, params);
  auto reply = c.reply(id, notes);
  INFO(method << " " << params.dump() << " -> " << reply.dump());
  REQUIRE(!reply.is_null());
  return reply;
}

json result_of(line_client& c, int id, const std::string& method, const json& params, std::vector<json>* notes = nullptr) {
  auto reply = ask(c, id, method, params, notes);
  INFO(method << " -> " << reply.dump());
  REQUIRE(reply.contains("result"));
  return reply["result"];
}

int error_code(const json& reply) { return reply.contains("error") ? reply["error"].value("code", 0) : 0; }

// What one client has seen of its terminal session, read until a pattern shows up.
struct viewer {
  line_client& c;
  std::string session;
  std::string seen;
  std::vector<std::string> methods;  // every notification about this session, in order

  void take(const json& m) {
    if (!m.contains("method") || m["params"].value("session", "") != session) return;
    methods.push_back(m["method"]);
    if (m["method"] == "session.output") seen += m["params"].value("data", "");
  }
  void take_all(const std::vector<json>& notes) {
    for (auto& n : notes) take(n);
  }
  // The first match of `pattern` in what came, waiting for more (each read is bounded).
  std::string wait_for(const std::string& pattern) {
    std::regex re(pattern);
    std::smatch m;
    while (!std::regex_search(seen, m, re)) {
      auto next = c.next();
      if (next.is_null()) return "";
      take(next);
    }
    return m.size() > 1 ? m[1].str() : m[0].str();
  }
  bool wait_method(const std::string& method) {
    while (std::find(methods.begin(), methods.end(), method) == methods.end()) {
      auto next = c.next();
      if (next.is_null()) return false;
      take(next);
    }
    return true;
  }
};

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The host pid of the process the workspace `id` sees as `inner`: its last NSpid is
// `inner` and its cgroup is the workspace's.
pid_t host_pid_of(const std::string& id, const std::string& inner) {
  DIR* d = ::opendir("/proc");
  pid_t found = 0;
  while (auto* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto status = read_file("/proc/" + name + "/status");
    auto at = status.find("NSpid:");
    if (at == std::string::npos) continue;
    auto line = status.substr(at, status.find('\n', at) - at);
    auto last = line.substr(line.find_last_of(" \t") + 1);
    bool nested = std::count(line.begin(), line.end(), '\t') > 1;
    if (nested && last == inner && read_file("/proc/" + name + "/cgroup").find(id) != std::string::npos)
      found = std::stoi(name);
  }
  ::closedir(d);
  return found;
}

} // namespace

TEST_CASE("a workspace's terminal outlives its client: re-attached it shows the scrollback and keeps its process",
          "[workspace][daemon][terminal]") {
  REQUIRE_LANDLOCK();
  daemon_process d;
  line_client first(d.socket);
  std::string id = result_of(first, 1, "workspace.create", {{"name", "shells"}, {"idle_timeout", 600}})["workspace"];
  std::vector<json> notes;
  auto opened = result_of(first, 2, "session.open",
                          {{"kind", "terminal"}, {"argv", {"sh"}}, {"echo", false}, {"workspace", "shells"}}, &notes);
  std::string terminal = opened["terminal"];
  CHECK(terminal.rfind("t", 0) == 0);
  CHECK(opened["workspace"] == id);
  viewer one{first, opened["session"], {}, {}};
  one.take_all(notes);
  CHECK(result_of(first, 3, "session.write", {{"session", one.session}, {"data", "echo one-$((6*7)) pid-$$\n"}})["written"] ==
        true);
  std::string inner = one.wait_for("one-42 pid-([0-9]+)");
  REQUIRE(!inner.empty());
  pid_t shell = host_pid_of(id, inner);
  REQUIRE(shell > 0);
  INFO("the terminal's shell is " << inner << " in the workspace, " << shell << " on the host");
  // The terminal is the workspace's, not an execution in it: nothing counts as running.
  auto info = result_of(first, 4, "workspace.inspect", {{"workspace", id}});
  CHECK(info["running"] == 0);
  CHECK(info["terminals"] == 1);

  // The client goes: the terminal stays, with nobody watching it.
  first.close();
  line_client second(d.socket);
  int n = 10;
  CHECK(eventually([&] {
    auto listed = result_of(second, n++, "workspace.terminals", {{"workspace", id}})["terminals"];
    return listed.size() == 1 && listed[0]["terminal"] == terminal && listed[0]["viewers"] == 0;
  }));
  CHECK(pid_alive(shell));

  // Attached again (the latest terminal, as the writer): the scrollback first, then live,
  // and the same shell answers.
  notes.clear();
  auto again = result_of(second, 20, "workspace.attach", {{"workspace", "shells"}}, &notes);
  CHECK(again["terminal"] == terminal);
  CHECK(again["writer"] == true);
  viewer two{second, again["session"], {}, {}};
  two.take_all(notes);
  CHECK(two.wait_for("one-42 pid-[0-9]+") != "");
  result_of(second, 21, "session.write", {{"session", two.session}, {"data", "echo again-$$\n"}});
  CHECK(two.wait_for("again-([0-9]+)") == inner);

  // A viewer sees it live and cannot type.
  line_client third(d.socket);
  notes.clear();
  auto watching = result_of(third, 30, "workspace.attach", {{"workspace", id}, {"terminal", terminal}, {"writer", false}}, &notes);
  CHECK(watching["writer"] == false);
  viewer three{third, watching["session"], {}, {}};
  three.take_all(notes);
  CHECK(three.wait_for("again-[0-9]+") != "");
  CHECK(error_code(ask(third, 31, "session.write", {{"session", three.session}, {"data", "echo viewer-typed\n"}})) ==
        rpc::kConflict);
  CHECK(error_code(ask(third, 32, "session.resize", {{"session", three.session}, {"rows", 10}, {"cols", 10}})) ==
        rpc::kConflict);
  result_of(second, 22, "session.write", {{"session", two.session}, {"data", "echo both-$((5*5))\n"}});
  CHECK(three.wait_for("both-25") != "");
  CHECK(three.seen.find("viewer-typed") == std::string::npos);

  // A second writer is refused, unless it takes over: the first goes on as a viewer.
  line_client fourth(d.socket);
  CHECK(error_code(ask(fourth, 40, "workspace.attach", {{"workspace", id}})) == rpc::kConflict);
  auto taken = result_of(fourth, 41, "workspace.attach", {{"workspace", id}, {"take_over", true}});
  CHECK(taken["writer"] == true);
  viewer four{fourth, taken["session"], {}, {}};
  CHECK(two.wait_method("session.writer_lost"));
  CHECK(error_code(ask(second, 23, "session.write", {{"session", two.session}, {"data", "echo old-writer\n"}})) ==
        rpc::kConflict);
  result_of(fourth, 42, "session.write", {{"session", four.session}, {"data", "echo four-$((2*2))\n"}});
  CHECK(two.wait_for("four-4") != "");
  CHECK(three.wait_for("four-4") != "");
  CHECK(two.seen.find("old-writer") == std::string::npos);

  // Detaching leaves it running; the others still watch.
  CHECK(result_of(fourth, 43, "session.detach", {{"session", four.session}})["detached"] == true);
  CHECK(error_code(ask(fourth, 44, "session.write", {{"session", four.session}, {"data", "x"}})) == rpc::kInvalidParams);
  CHECK(eventually([&] {
    auto listed = result_of(fourth, n++, "workspace.terminals", {{"workspace", id}})["terminals"];
    return listed.size() == 1 && listed[0]["viewers"] == 2 && listed[0]["writer"] == false;
  }));
  CHECK(pid_alive(shell));

  // Ending the workspace ends the terminal for every viewer, and its process with it.
  CHECK(result_of(fourth, 50, "workspace.end", {{"workspace", id}})["ended"] == true);
  CHECK(two.wait_method("session.ended"));
  CHECK(three.wait_method("session.ended"));
  CHECK(eventually([&] { return !pid_alive(shell); }));
  CHECK(error_code(ask(fourth, 51, "workspace.terminals", {{"workspace", id}})) == rpc::kNotFound);
}

TEST_CASE("workspace.attach refuses what it cannot attach, and session.detach only a workspace's terminal",
          "[workspace][daemon][terminal]") {
  REQUIRE_LANDLOCK();
  daemon_process d;
  line_client c(d.socket);
  std::string id = result_of(c, 1, "workspace.create", {{"idle_timeout", 600}})["workspace"];
  // No terminal yet, a terminal that is not there, a workspace that is not there.
  CHECK(error_code(ask(c, 2, "workspace.attach", {{"workspace", id}})) == rpc::kNotFound);
  CHECK(error_code(ask(c, 3, "workspace.attach", {{"workspace", id}, {"terminal", "t999"}})) == rpc::kNotFound);
  CHECK(error_code(ask(c, 4, "workspace.attach", {{"workspace", "nowhere"}})) == rpc::kNotFound);
  CHECK(error_code(ask(c, 5, "workspace.attach", {{"workspace", id}, {"writer", "yes"}})) == rpc::kInvalidParams);
  CHECK(error_code(ask(c, 6, "workspace.attach", {{"workspace", id}, {"tty", true}})) == rpc::kInvalidParams);
  CHECK(result_of(c, 7, "workspace.terminals", {{"workspace", id}})["terminals"].empty());

  // A terminal outside any workspace is the client's own: it cannot be left running.
  auto own = result_of(c, 8, "session.open", {{"kind", "terminal"}, {"argv", {"sh"}}});
  CHECK(!own.contains("terminal"));
  CHECK(error_code(ask(c, 9, "session.detach", {{"session", own["session"]}})) == rpc::kInvalidParams);

  // One connection attaches to a terminal once.
  auto opened = result_of(c, 10, "session.open", {{"kind", "terminal"}, {"argv", {"sh"}}, {"workspace", id}});
  CHECK(error_code(ask(c, 11, "workspace.attach", {{"workspace", id}, {"terminal", opened["terminal"]}})) ==
        rpc::kConflict);

  // A terminal that ends on its own leaves the workspace's list.
  result_of(c, 12, "session.write", {{"session", opened["session"]}, {"data", "exit 3\n"}});
  int n = 20;
  CHECK(eventually([&] { return result_of(c, n++, "workspace.terminals", {{"workspace", id}})["terminals"].empty(); }));
  CHECK(result_of(c, 13, "session.close", {{"session", own["session"]}})["closing"] == true);
}

TEST_CASE("in the library a workspace's terminal is found again and attached by several, one writing",
          "[workspace][terminal][landlock]") {
  REQUIRE_LANDLOCK();
  one_workspace f;
  auto& t = f.t;
  const auto& id = f.id;
  terminal_request r;
  r.argv = {"sh"};
  r.echo = false;
  r.workspace = id;
  auto opened = t.rt->open_terminal(r);
  REQUIRE(opened);
  caf::anon_send(opened->actor, input_atom::value, std::string("echo kept-$((8*8))\n"));

  // Nobody holds it but the workspace: listed, found by id and as the latest.
  auto listed = t.rt->workspace_terminals(id);
  REQUIRE(listed);
  REQUIRE(listed->size() == 1);
  auto tid = listed->front().id;
  CHECK(listed->front().argv == std::vector<std::string>{"sh"});
  auto found = t.rt->workspace_terminal(id, tid);
  REQUIRE(found);
  CHECK(found->actor == opened->actor);
  CHECK(t.rt->workspace_terminal(id)->actor == opened->actor);
  CHECK(!t.rt->workspace_terminal(id, "t0"));
  CHECK(!t.rt->workspace_terminal(id, tid, "someone-else"));

  caf::scoped_actor a{t.rt->system()}, b{t.rt->system()};
  auto attach = [&](caf::scoped_actor& who, bool writer, bool take_over) {
    terminal_attached out;
    who->request(found->actor, 10s, attach_atom::value, caf::actor_cast<caf::actor>(who), writer, take_over)
        .receive([&](terminal_attached& got) { out = std::move(got); }, [&](caf::error& e) { FAIL(to_string(e)); });
    return out;
  };
  // Reads what `who` is sent until `needle` shows, or the bound passes.
  auto sees = [&](caf::scoped_actor& who, const std::string& needle, std::string seen = {}) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (seen.find(needle) == std::string::npos && std::chrono::steady_clock::now() < deadline)
      who->receive([&](terminal_output& o) { seen += o.bytes; }, [&](terminal_demoted&) { seen += "<demoted>"; },
                   caf::after(200ms) >> [] {});
    return seen.find(needle) != std::string::npos;
  };
  auto first = attach(a, true, false);
  REQUIRE(first.ok);
  CHECK(first.writer);
  CHECK(sees(a, "kept-64", first.scrollback));
  auto refused = attach(b, true, false);
  CHECK(!refused.ok);
  CHECK(refused.error.kind == failure_kind::conflict);
  auto watching = attach(b, false, false);
  REQUIRE(watching.ok);
  CHECK(!watching.writer);
  caf::anon_send(found->actor, input_atom::value, std::string("echo both-$((9*9))\n"));
  CHECK(sees(a, "both-81"));
  CHECK(sees(b, "both-81"));
  CHECK(eventually([&] { return t.rt->workspace_terminals(id)->front().viewers == 2; }));
  // Taking over demotes the writer, who goes on viewing.
  auto taken = attach(b, true, true);
  CHECK(taken.writer);
  CHECK(sees(a, "<demoted>"));
  CHECK(eventually([&] {
    auto now = t.rt->workspace_terminals(id)->front();
    return now.viewers == 2 && now.writer;
  }));

  // Ending the workspace ends the terminal: both viewers hear it.
  REQUIRE(t.rt->end_workspace(id));
  for (auto* who : {&a, &b}) {
    bool ended = false;
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!ended && std::chrono::steady_clock::now() < deadline)
      (*who)->receive([&](session_ended&) { ended = true; }, [](terminal_output&) {}, [](terminal_demoted&) {},
                      caf::after(200ms) >> [] {});
    CHECK(ended);
  }
}

TEST_CASE("a workspace ended while its new terminal is still starting ends the terminal too",
          "[workspace][terminal][landlock]") {
  REQUIRE_LANDLOCK();
  // The terminal's share of the budget is still being acquired (the holder arms at the
  // first step) when the end comes: its lease once looped on itself here, forever.
  test_runtime t(workspace_profile(), false);
  for (int round = 0; round < 3; ++round) {
    auto w = t.rt->create_workspace({});
    REQUIRE(w);
    terminal_request r;
    r.workspace = w->record.id;
    auto opened = t.rt->open_terminal(r);
    REQUIRE(opened);
    caf::scoped_actor watcher{t.rt->system()};
    watcher->monitor(opened->actor);
    REQUIRE(t.rt->end_workspace(w->record.id));
    bool gone = false;
    watcher->receive([&](caf::down_msg&) { gone = true; }, caf::after(10s) >> [] {});
    CHECK(gone);
  }
}
