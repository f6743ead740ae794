// What a warm jail may be handed: the boundary comparison between an armed spec and a
// request's, and the frames that carry a spec to the waiting helper. No jail is started.
#include <cstdint>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tiers/exec_helper/spec_frames.hpp"
#include "tiers/jail/jail_spec.hpp"

using namespace corral;

TEST_CASE("a warm jail is handed a request only when the request's boundary is the one it armed", "[warm][spec]") {
  jail_spec armed;
  armed.mode = jail_mode::jail;
  armed.program = "/bin/sh";
  armed.argv = {"/bin/sh"};
  armed.mounts.push_back({.kind = mount_kind::ro_bind, .source = "/usr", .target = "/usr"});
  armed.landlock_rules.push_back({"/usr", false});
  armed.cgroup_procs = {"/sys/fs/cgroup/pids/corral/x-w1/tasks"};

  jail_spec request = armed;
  request.program = "/usr/bin/python3";
  request.argv = {"python3", "-c", "pass"};
  request.envp = {"A=1"};
  request.cwd = "/work";
  request.kill_grace_ms = 50;
  CHECK(same_boundary(armed, request));

  auto differs = [&](auto change) {
    jail_spec other = request;
    change(other);
    return !same_boundary(armed, other);
  };
  CHECK(differs([](jail_spec& s) { s.mounts.push_back({.kind = mount_kind::rw_bind, .source = "/home", .target = "/home"}); }));
  CHECK(differs([](jail_spec& s) { s.landlock_rules[0].writable = true; }));
  CHECK(differs([](jail_spec& s) { s.share_network = true; }));
  CHECK(differs([](jail_spec& s) { s.seccomp_kill = true; }));
  CHECK(differs([](jail_spec& s) { s.uid_outside = 0; }));
  CHECK(differs([](jail_spec& s) { s.cgroup_procs.clear(); }));
  CHECK(differs([](jail_spec& s) { s.controlling_tty = true; }));

  // The launch carries only its own fields onto the armed spec.
  jail_spec launched = armed;
  jail_spec hostile = request;
  hostile.share_network = true;
  hostile.mounts.clear();
  apply_launch(launched, hostile);
  CHECK(launched.argv == request.argv);
  CHECK_FALSE(launched.share_network);
  CHECK(launched.mounts.size() == 1);
}

TEST_CASE("spec frames round-trip, and EOF and a short frame are told apart", "[warm][spec]") {
  auto through_pipe = [](const std::string& bytes, std::string& out) {
    int p[2];
    REQUIRE(::pipe(p) == 0);
    REQUIRE(::write(p[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    ::close(p[1]);
    auto got = helper::read_frame(p[0], out);
    ::close(p[0]);
    return got;
  };
  jail_spec s;
  s.mode = jail_mode::jail;
  s.program = "/bin/true";
  s.argv = {"true"};
  std::string out;
  REQUIRE(through_pipe(spec_frame(serialize(s)), out) == helper::frame_read::ok);
  auto parsed = parse_jail_spec(out);
  REQUIRE(parsed);
  CHECK(parsed->argv == s.argv);
  CHECK(through_pipe("", out) == helper::frame_read::eof);
  CHECK(through_pipe(spec_frame("abcdef").substr(0, 6), out) == helper::frame_read::broken);
  std::uint32_t huge = kMaxFrameBytes + 1;
  CHECK(through_pipe(std::string(reinterpret_cast<const char*>(&huge), 4), out) == helper::frame_read::broken);
}
