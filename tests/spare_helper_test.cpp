// The spare exec helper (actors/io/spare_helper.cpp): spawned ahead, idle on its fd 3, taken
// by the next cold launch. Asserted from outside through /proc: which helper ran the
// program, that the spare carries nothing of the runtime's (environment, descriptors), that
// a killed spare costs a launch nothing, and that a stopped runtime leaves none.
#include <csignal>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "proc_file.hpp"
#include "runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;

namespace {

// This process's children that run the exec helper: with no warm jail and nothing running,
// the spare alone.
std::vector<pid_t> helper_children() {
  std::vector<pid_t> out;
  for (auto& name : entries("/proc")) {
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto line = read_proc_file("/proc/" + name + "/stat");  // the process may exit meanwhile
    auto close = line.rfind(')');
    auto open = line.find('(');
    if (close == std::string::npos || open == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == ::getpid() && state != 'Z' && line.substr(open + 1, close - open - 1) == "corral-exec")
      out.push_back(std::stoi(name));
  }
  return out;
}

// The single spare, once there is exactly one.
pid_t the_spare() {
  pid_t found = 0;
  eventually([&] {
    auto now = helper_children();
    found = now.size() == 1 ? now.front() : 0;
    return found != 0;
  });
  return found;
}

} // namespace

TEST_CASE("a cold launch runs in the spare helper and a new spare takes its place", "[runtime][spare]") {
  test_runtime t;  // host tier: the program's parent is the helper, seen from here
  pid_t spare = the_spare();
  REQUIRE(spare > 0);

  // It holds nothing of the runtime's: no environment, and only fds 0-4.
  std::ifstream environ("/proc/" + std::to_string(spare) + "/environ");
  std::string env((std::istreambuf_iterator<char>(environ)), std::istreambuf_iterator<char>());
  CHECK(env.empty());
  auto fds = entries("/proc/" + std::to_string(spare) + "/fd");
  std::sort(fds.begin(), fds.end());
  CHECK(fds == std::vector<std::string>{"0", "1", "2", "3", "4"});

  auto r = t.run(shell("echo $PPID; cat"));  // no stdin: EOF at once, as /dev/null gives
  REQUIRE(r);
  CHECK(r->exit_code == 0);
  CHECK(r->out.data == std::to_string(spare) + "\n");
  auto spec = std::find_if(r->steps.begin(), r->steps.end(), [](auto& s) { return s.name == "spec"; });
  REQUIRE(spec != r->steps.end());
  CHECK(spec->micros < 1'000'000);  // from the spec's arrival, not from the spare's start

  pid_t next = the_spare();
  CHECK(next > 0);
  CHECK(next != spare);
  CHECK(tracked_after_settling(*t.rt) == 0);  // the spare is nobody's execution

  // Stdin still reaches a program that was given some.
  auto in = shell("cat");
  in.stdin_data = std::string("through the spare\n");
  auto echoed = t.run(in);
  REQUIRE(echoed);
  CHECK(echoed->out.data == "through the spare\n");

  // A stopped runtime leaves no spare.
  pid_t last = the_spare();
  REQUIRE(last > 0);
  t.rt.reset();
  CHECK(::kill(last, 0) != 0);
  CHECK(helper_children().empty());
}

TEST_CASE("a spare killed while idle costs the next launch its own spawn and is replaced after it", "[runtime][spare]") {
  test_runtime t;
  pid_t spare = the_spare();
  REQUIRE(spare > 0);
  REQUIRE(::kill(spare, SIGKILL) == 0);
  REQUIRE(eventually([&] { return helper_children().empty(); }));  // reaped, not replaced at once

  auto r = t.run(shell("echo $PPID"));
  REQUIRE(r);
  CHECK(r->exit_code == 0);
  CHECK(r->out.data != std::to_string(spare) + "\n");
  CHECK(tracked_after_settling(*t.rt) == 0);
  pid_t next = the_spare();  // spawned after that launch's own helper
  CHECK(next > 0);
  CHECK(next != spare);
}

TEST_CASE("a one-shot runtime's spare serves its first launch only", "[runtime][spare]") {
  test_runtime t(test_runtime::host_profile(), true, 0, [](runtime_options& o) { o.spare_helper = spare_helper_mode::once; });
  pid_t spare = the_spare();
  REQUIRE(spare > 0);
  auto r = t.run(shell("echo $PPID"));
  REQUIRE(r);
  CHECK(r->out.data == std::to_string(spare) + "\n");
  CHECK(tracked_after_settling(*t.rt) == 0);
  CHECK(helper_children().empty());  // no replacement
}

TEST_CASE("without a spare every launch spawns its own helper", "[runtime][spare]") {
  test_runtime t(test_runtime::host_profile(), true, 0, [](runtime_options& o) { o.spare_helper = spare_helper_mode::none; });
  auto r = t.run(shell("echo ran"));
  REQUIRE(r);
  CHECK(r->out.data == "ran\n");
  CHECK(helper_children().empty());
}
