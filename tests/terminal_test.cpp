// Terminal sessions: a pty child inside the boundary (resize, scrollback across detach and
// re-attach, deadlines), and `corral shell` driven by tmux.
#include <chrono>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "container_fixture.hpp"
#include "runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

profile landlock_profile() {
  profile p;
  p.tier = "landlock";
  p.limit.kill_grace = 200ms;
  return p;
}

// Collects what an attached client sees until `needle` appears (bounded).
struct terminal_watcher {
  caf::scoped_actor self;
  caf::actor terminal;
  std::string seen;
  std::optional<session_ended> ended;

  terminal_watcher(caf::actor_system& sys, caf::actor t) : self(sys), terminal(std::move(t)) {}

  std::string attach() {
    std::string scrollback;
    self->request(terminal, 10s, reattach_atom::value, caf::actor_cast<caf::actor>(self))
        .receive([&](std::string& s) { scrollback = std::move(s); }, [&](caf::error& e) { FAIL("reattach: " << to_string(e)); });
    seen += scrollback;
    return scrollback;
  }

  bool wait_for(const std::string& needle, std::chrono::milliseconds bound = 10s) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (seen.find(needle) == std::string::npos && !ended) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      self->receive([&](terminal_output& o) { seen += o.bytes; }, [&](session_ended& e) { ended = e; },
                    caf::after(left) >> [] {});
    }
    return seen.find(needle) != std::string::npos;
  }

  bool wait_end(std::chrono::milliseconds bound = 10s) {
    wait_for("\x01never\x01", bound);
    return ended.has_value();
  }

  void input(const std::string& bytes) { self->send(terminal, input_atom::value, bytes); }
};

session_handle open_terminal_or_fail(runtime& rt, const terminal_request& r) {
  auto h = rt.open_terminal(r);
  if (!h) FAIL("open_terminal: " << h.error().describe());
  return *h;
}

bool no_process_with(const std::string& marker, std::chrono::milliseconds bound) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    bool found = false;
    DIR* d = ::opendir("/proc");
    while (auto* e = d ? ::readdir(d) : nullptr) {
      if (std::atoi(e->d_name) <= 0 || std::atoi(e->d_name) == ::getpid()) continue;
      std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline");
      std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      for (auto& c : cmd)
        if (c == '\0') c = ' ';
      if (cmd.find(marker) != std::string::npos) found = true;
    }
    if (d) ::closedir(d);
    if (!found) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
}

void sees_the_resize(runtime& rt) {
  terminal_request r;
  // The trap shows that SIGWINCH reached the program; stty reads the size the pty holds.
  r.argv = {"sh", "-c", "trap 'echo winch $(stty size)' WINCH; echo ready $(stty size); while :; do sleep 0.05; done"};
  r.rows = 24;
  r.cols = 80;
  auto h = open_terminal_or_fail(rt, r);
  terminal_watcher w(rt.system(), h.actor);
  w.attach();
  // The first output waits for the child to start: on the container tier that is a podman
  // run, which took over 10 s on a CI machine running the container and microvm escape
  // suites beside it. The terminal's own startup deadline (30 s) bounds it.
  REQUIRE(w.wait_for("ready 24 80", r.startup_timeout));
  w.self->send(h.actor, resize_atom::value, std::uint16_t{40}, std::uint16_t{100});
  CHECK(w.wait_for("winch 40 100"));
  w.self->send(h.actor, cancel_atom::value);
  REQUIRE(w.wait_end());
  CHECK(w.ended->reason == session_end_reason::cancelled);
}

} // namespace

TEST_CASE("a pty child sees the resize (SIGWINCH and stty size) on the host tier", "[terminal][host]") {
  test_runtime t;
  sees_the_resize(*t.rt);
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("a pty child sees the resize (SIGWINCH and stty size) on the landlock tier", "[terminal][landlock]") {
  test_runtime t(landlock_profile(), false);
  sees_the_resize(*t.rt);
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("detach and re-attach return the scrollback - no-echo keeps input out of it", "[terminal][landlock]") {
  test_runtime t(landlock_profile(), false);
  terminal_request r;
  r.argv = {"sh"};
  r.echo = false;
  auto h = open_terminal_or_fail(*t.rt, r);
  {
    terminal_watcher first(t.rt->system(), h.actor);
    first.attach();
    first.input("echo first-$((6*7))\n");
    REQUIRE(first.wait_for("first-42"));
    CHECK(first.seen.find("$((6*7))") == std::string::npos);  // not echoed
    first.self->send(h.actor, detach_atom::value);
  }
  // Nobody attached: the terminal goes on, and its output goes to the scrollback.
  caf::anon_send(h.actor, input_atom::value, std::string("echo second-$((7*7))\n"));
  std::this_thread::sleep_for(500ms);
  terminal_watcher second(t.rt->system(), h.actor);
  auto scrollback = second.attach();
  CHECK(scrollback.find("first-42") != std::string::npos);
  CHECK(scrollback.find("second-49") != std::string::npos);
  second.input("exit 5\n");
  REQUIRE(second.wait_end());
  CHECK(second.ended->reason == session_end_reason::exited);
  CHECK(second.ended->exit_code == 5);
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("a terminal's lifetime deadline ends it and its descendants", "[terminal][landlock]") {
  test_runtime t(landlock_profile(), false);
  terminal_request r;
  r.argv = {"sh", "-c", "sleep 31340 & sleep 31341"};
  r.lifetime = 500ms;
  auto h = open_terminal_or_fail(*t.rt, r);
  terminal_watcher w(t.rt->system(), h.actor);
  w.attach();
  REQUIRE(w.wait_end());
  CHECK(w.ended->reason == session_end_reason::lifetime);
  CHECK(no_process_with("sleep 3134", 5s));
  CHECK(tracked_after_settling(*t.rt) == 0);
}

TEST_CASE("corral shell under tmux runs a command and leaves the terminal sane", "[terminal][host][cli]") {
  if (std::system("command -v tmux >/dev/null 2>&1") != 0) {
    WARN("tmux is not installed (scripts/setup installs it): skipped");
    return;
  }
  temp_dir dir;
  std::string sock = dir / "tmux.sock";
  std::string tmux = "tmux -S " + sock + " ";
  std::string script = dir / "run.sh";
  {
    std::ofstream s(script);
    s << "stty -a > " << dir / "before" << "\n"
      << CORRAL_TEST_CLI << " shell --tier host --allow-host -- /bin/sh\n"
      << "echo \"corral-status=$?\" > " << dir / "status" << "\n"
      << "stty -a > " << dir / "after" << "\n"
      << "sleep 30\n";
  }
  REQUIRE(std::system((tmux + "new-session -d -s corral -x 100 -y 30 'sh " + script + "'").c_str()) == 0);
  struct kill_server {
    std::string cmd;
    ~kill_server() { (void)std::system(cmd.c_str()); }
  } cleanup{tmux + "kill-server >/dev/null 2>&1"};
  auto capture = [&] {
    std::string out = dir / "pane";
    (void)std::system((tmux + "capture-pane -p -t corral > " + out).c_str());
    std::ifstream f(out);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  auto wait_pane = [&](const std::string& needle) {
    for (int i = 0; i < 200; ++i) {
      if (capture().find(needle) != std::string::npos) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  };
  // Keys go in once the inner shell shows its prompt: corral shell enters raw mode with
  // TCSAFLUSH, which drops what was typed before (a fixed 500 ms was too short under
  // the sanitizer build on a loaded machine).
  auto prompt = [&] {
    for (int i = 0; i < 400; ++i) {
      // capture-pane trims trailing blanks: the prompt is a line of "#" or "$" alone.
      std::istringstream pane(capture());
      for (std::string line; std::getline(pane, line);)
        if (line == "#" || line == "$") return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  };
  REQUIRE(prompt());
  (void)std::system((tmux + "send-keys -t corral 'echo hi-$((6*7)); stty size' Enter").c_str());
  REQUIRE(wait_pane("hi-42"));
  CHECK(wait_pane("30 100"));  // the window size reached the inner terminal
  (void)std::system((tmux + "send-keys -t corral 'exit 3' Enter").c_str());
  bool finished = false;
  for (int i = 0; i < 200 && !finished; ++i) {
    finished = ::access((dir / "after").c_str(), F_OK) == 0;
    if (!finished) std::this_thread::sleep_for(50ms);
  }
  REQUIRE(finished);
  std::this_thread::sleep_for(100ms);
  std::ifstream status(dir / "status"), before(dir / "before"), after(dir / "after");
  std::string st((std::istreambuf_iterator<char>(status)), std::istreambuf_iterator<char>());
  std::string b((std::istreambuf_iterator<char>(before)), std::istreambuf_iterator<char>());
  std::string a((std::istreambuf_iterator<char>(after)), std::istreambuf_iterator<char>());
  CHECK(st == "corral-status=3\n");
  CHECK_FALSE(b.empty());
  CHECK(a == b);  // raw mode undone: the same settings as before corral ran
}

TEST_CASE("a pty child sees the resize (SIGWINCH and stty size) on the container tier", "[terminal][container]") {
  auto why = podman_unavailable();
  if (!why.empty()) {
    WARN("skipped: no container engine runs here: " << why);
    return;
  }
  test_runtime t(podman_profile(), false);
  sees_the_resize(*t.rt);
  CHECK(tracked_after_settling(*t.rt) == 0);
  CHECK(shell_output("podman ps -a --format '{{.Names}}'").find("corral-") == std::string::npos);
}
