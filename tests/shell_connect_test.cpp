// corral shell --connect against a real `corral serve`: a person's terminal played by tmux
// (keystrokes in, the pane read back), and the local tty's settings compared before and
// after, as for the in-process shell in terminal_test.cpp.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/runtime_fixture.hpp"
#include "tests/served_daemon.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

// A detached tmux server of its own, 100x30, running `script`; killed when it goes.
struct tmux_pane {
  std::string base;
  std::string pane_file;

  tmux_pane(const temp_dir& dir, const std::string& script)
      : base("tmux -S " + (dir / "tmux.sock") + " "), pane_file(dir / "pane") {
    REQUIRE(std::system((base + "new-session -d -s corral -x 100 -y 30 'sh " + script + "'").c_str()) == 0);
  }
  ~tmux_pane() { (void)std::system((base + "kill-server >/dev/null 2>&1").c_str()); }

  void run(const std::string& args) { (void)std::system((base + args).c_str()); }
  void keys(const std::string& line) { run("send-keys -t corral '" + line + "' Enter"); }
  std::string capture() {
    run("capture-pane -p -t corral > " + pane_file);
    return read_text(pane_file);
  }
  bool wait_for(const std::string& needle, std::chrono::milliseconds bound = 10s) {
    return eventually([&] { return capture().find(needle) != std::string::npos; }, bound);
  }
};

bool have_tmux() { return std::system("command -v tmux >/dev/null 2>&1") == 0; }

// The shell script tmux runs: the tty's settings before and after `corral shell --connect`,
// and its exit status, each in a file of `dir`.
std::string shell_script(const temp_dir& dir, const std::string& socket, const std::string& program) {
  std::string path = dir / "run.sh";
  std::ofstream s(path);
  // --foreground: timeout's own process group would be a background one, stopped by SIGTTIN.
  s << "stty -a > " << dir / "before" << "\n"
    << "timeout --foreground 120 " << CORRAL_TEST_CLI << " shell --connect " << socket << " -- /bin/sh -c '" << program
    << "'\n"
    << "echo \"corral-status=$?\" > " << dir / "status" << "\n"
    << "stty -a > " << dir / "after" << "\n"
    << "sleep 30\n";
  return path;
}

// `stty -a` without its "rows R; columns C; " (the window, not a setting of the tty).
std::string without_size(std::string stty) {
  for (auto at = stty.find("rows "); at != std::string::npos; at = stty.find("rows ", at)) {
    auto end = stty.find("; ", stty.find("; columns ", at) + 2);
    if (stty.find("; columns ", at) == std::string::npos || end == std::string::npos) break;
    stty.erase(at, end + 2 - at);
  }
  return stty;
}

} // namespace

TEST_CASE("corral shell --connect runs a command, follows a resize and leaves the terminal sane", "[terminal][daemon][cli]") {
  if (!have_tmux()) {
    WARN("tmux is not installed (scripts/setup installs it): skipped");
    return;
  }
  served_daemon d(std::vector<std::string>{});
  temp_dir dir;
  tmux_pane tmux(dir, shell_script(dir, d.socket, "echo corral-ready; exec /bin/sh"));
  // Keys typed before corral is in raw mode would be flushed by it: wait for the program.
  REQUIRE(tmux.wait_for("corral-ready", 30s));
  tmux.keys("echo hi-$((6*7)); stty size");
  REQUIRE(tmux.wait_for("hi-42"));
  CHECK(tmux.wait_for("30 100"));  // the initial size came with session.open
  tmux.run("resize-window -t corral -x 120 -y 40");
  // The resize travels as SIGWINCH then session.resize, unordered with keystrokes: ask
  // again until the inner terminal has it (bounded).
  bool resized = false;
  for (int i = 0; i < 20 && !resized; ++i) {
    tmux.keys("stty size");
    resized = tmux.wait_for("40 120", 500ms);
  }
  CHECK(resized);
  tmux.keys("exit 3");
  REQUIRE(eventually([&] { return exists(dir / "after"); }, 20s));
  REQUIRE(eventually([&] { return read_text(dir / "after").find("\n") != std::string::npos; }));
  CHECK(read_text(dir / "status") == "corral-status=3\n");
  CHECK_FALSE(read_text(dir / "before").empty());
  // Raw mode undone: the same settings as before, the window's new size aside.
  CHECK(without_size(read_text(dir / "after")) == without_size(read_text(dir / "before")));
}

TEST_CASE("corral shell --connect whose daemon is killed exits 125, says so and restores the terminal", "[terminal][daemon][cli]") {
  if (!have_tmux()) {
    WARN("tmux is not installed (scripts/setup installs it): skipped");
    return;
  }
  served_daemon d(std::vector<std::string>{});
  temp_dir dir;
  tmux_pane tmux(dir, shell_script(dir, d.socket, "echo corral-ready; exec sleep 30.6161"));
  REQUIRE(tmux.wait_for("corral-ready", 30s));
  REQUIRE(eventually([] { return !with_arg("30.6161").empty(); }));
  d.stop(SIGKILL);
  REQUIRE(eventually([&] { return exists(dir / "after"); }, 20s));
  REQUIRE(eventually([&] { return read_text(dir / "after").find("\n") != std::string::npos; }));
  CHECK(read_text(dir / "status") == "corral-status=125\n");
  CHECK(read_text(dir / "after") == read_text(dir / "before"));
  CHECK(tmux.wait_for("lost the corral daemon"));
  // The killed daemon's child stays in its cgroup until a start on the same state sweeps it.
  d.start();
  CHECK(eventually([] { return with_arg("30.6161").empty(); }, 10s));
}

TEST_CASE("corral shell --connect without a terminal: stdin's end is ^D, a signal's death is 128+N", "[terminal][daemon][cli]") {
  served_daemon d(std::vector<std::string>{});
  temp_dir dir;
  auto shell = [&](const std::string& input) {
    std::string cmd = "printf '" + input + "' | timeout 60 " + CORRAL_TEST_CLI + " shell --connect " + d.socket +
                      " > " + (dir / "out") + " 2> " + (dir / "err");
    int rc = std::system(cmd.c_str());
    INFO(read_text(dir / "err"));
    REQUIRE(WIFEXITED(rc));
    return WEXITSTATUS(rc);
  };
  CHECK(shell("echo via-$((6*7))\\n") == 0);  // the shell ends at the ^D after its input
  CHECK(read_text(dir / "out").find("via-42") != std::string::npos);
  CHECK(shell("kill -9 $$\\n") == 128 + 9);
  CHECK(shell("exit 5\\n") == 5);
}

namespace {

// A command's stdout, and its exit status in `rc`.
std::string output_of(const std::string& cmd, int& rc) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = ::pclose(p);
  rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The script tmux runs for `corral shell --connect SOCKET ARGS`: its exit status into
// dir/status, renamed into place so that the file exists only once it is whole (the
// shell's `>` creates it empty before echo writes).
std::string cli_script(const temp_dir& dir, const std::string& socket, const std::string& args) {
  std::string path = dir / "run.sh";
  std::ofstream s(path);
  s << "timeout --foreground 120 " << CORRAL_TEST_CLI << " shell --connect " << socket << " " << args << "\n"
    << "echo \"corral-status=$?\" > " << dir / "status.part" << " && mv " << dir / "status.part" << " "
    << dir / "status" << "\n"
    << "sleep 30\n";
  return path;
}

// Types `line` until the pane shows `needle`: keys typed before corral is in raw mode are
// flushed by it, and an attach has no line of its own to wait for.
bool type_until(tmux_pane& tmux, const std::string& line, const std::string& needle) {
  for (int i = 0; i < 30; ++i) {
    tmux.keys(line);
    if (tmux.wait_for(needle, 1s)) return true;
  }
  return false;
}

} // namespace

TEST_CASE("corral shell --workspace leaves its terminal on ctrl-p ctrl-q, and a second client attaches to it",
          "[terminal][daemon][cli][workspace]") {
  if (!have_tmux()) {
    WARN("tmux is not installed (scripts/setup installs it): skipped");
    return;
  }
  served_daemon d(std::vector<std::string>{});
  auto ws = [&](const std::string& verb, const std::string& rest) {
    return std::string(CORRAL_TEST_CLI) + " ws " + verb + " --connect " + d.socket + " " + rest;
  };
  int rc = -1;
  // The socket file comes before the daemon accepts: retry the create until it does.
  REQUIRE(eventually([&] { return output_of(ws("create", "shelly 2>/dev/null"), rc).rfind("w-", 0) == 0; }, 20s));

  temp_dir first_dir;
  {
    tmux_pane first(first_dir, cli_script(first_dir, d.socket, "--workspace shelly"));
    REQUIRE(type_until(first, "echo mark-$((6*7))", "mark-42"));
    first.run("send-keys -t corral C-p C-q");
    REQUIRE(eventually([&] { return exists(first_dir / "status"); }, 20s));
    CHECK(read_text(first_dir / "status") == "corral-status=0\n");
    CHECK(first.wait_for("goes on in workspace"));
  }
  // Listed, with nobody watching.
  auto listed = output_of(ws("terminals", "shelly"), rc);
  INFO(listed);
  CHECK(rc == 0);
  CHECK(listed.find("/bin/sh") != std::string::npos);
  CHECK(listed.find(" 0 ") != std::string::npos);

  // Another client attaches (no program: the latest terminal): its scrollback, then live.
  temp_dir second_dir;
  tmux_pane second(second_dir, cli_script(second_dir, d.socket, "--workspace shelly"));
  CHECK(second.wait_for("mark-42", 20s));
  REQUIRE(type_until(second, "echo back-$((7*7))", "back-49"));
  second.keys("exit 4");
  REQUIRE(eventually([&] { return exists(second_dir / "status"); }, 20s));
  CHECK(read_text(second_dir / "status") == "corral-status=4\n");
  CHECK(output_of(ws("terminals", "shelly"), rc).find("/bin/sh") == std::string::npos);
  CHECK(output_of(ws("rm", "shelly"), rc).size() > 0);
}
