#include <catch2/catch.hpp>

#include "tiers/jail/jail_spec.hpp"
#include "tiers/jail/status_line.hpp"

using namespace corral;

TEST_CASE("a jail spec survives serialization unchanged", "[jail_spec]") {
  jail_spec s;
  s.mode = jail_mode::jail;
  s.program = "/usr/bin/python3";
  s.argv = {"python3", "-c", std::string("print(1)\xff", 9)};
  s.envp = {"A=1", "B="};
  s.cwd = "/work";
  s.kill_grace_ms = 750;
  s.mounts.push_back({.kind = mount_kind::tmpfs, .source = "", .target = "/tmp", .size_bytes = 64 << 20});
  s.mounts.push_back({.kind = mount_kind::ro_bind, .source = "/lib64", .target = "/lib64", .size_bytes = 0, .optional = true});
  s.mounts.push_back({.kind = mount_kind::rw_bind, .source = "/srv/out", .target = "/out", .size_bytes = 0,
                      .optional = false, .idmapped = true, .owner_uid = 1000, .owner_gid = 100});
  s.mounts.push_back({.kind = mount_kind::hidden, .source = "/srv/out/.env", .target = "/out/.env", .size_bytes = 0,
                      .optional = true});
  s.rlimits.push_back({4, 0, 0});
  s.cgroup_procs = {"/sys/fs/cgroup/pids/x/cgroup.procs"};
  s.landlock_abi_floor = 3;
  s.landlock_rules.push_back({"/usr", false});
  s.seccomp_kill = true;
  s.cleanup = {{"/usr/bin/runsc", "delete", "--force", "id"}, {"/bin/rm", "-rf", "--", "/x y"}};
  s.cleanup_unless_exited = {{"/usr/bin/podman", "rm", "-f", "c1"}};
  auto back = parse_jail_spec(serialize(s));
  REQUIRE(back);
  CHECK(back->mode == jail_mode::jail);
  CHECK(back->argv == s.argv);
  CHECK(back->envp == s.envp);
  CHECK(back->kill_grace_ms == 750);
  REQUIRE(back->mounts.size() == 4);
  CHECK(back->mounts[0].size_bytes == (64u << 20));
  CHECK(back->mounts[1].optional);
  CHECK(back->mounts[2].idmapped);
  CHECK(back->mounts[2].owner_uid == 1000);
  CHECK(back->mounts[2].owner_gid == 100);
  CHECK(back->mounts[3].kind == mount_kind::hidden);
  CHECK(back->cgroup_procs == s.cgroup_procs);
  CHECK(back->landlock_rules.at(0).path == "/usr");
  CHECK(back->seccomp_kill);
  CHECK(back->cleanup == s.cleanup);
  CHECK(back->cleanup_unless_exited == s.cleanup_unless_exited);
}

TEST_CASE("a truncated or corrupt jail spec is rejected, never half-applied", "[jail_spec]") {
  jail_spec s;
  s.program = "/bin/true";
  s.argv = {"true"};
  auto bytes = serialize(s);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) CHECK_FALSE(parse_jail_spec(bytes.substr(0, cut)));
  CHECK_FALSE(parse_jail_spec(bytes + "x"));
  auto huge = bytes;
  huge[5 + 4] = '\xff';  // the program's length field
  CHECK_FALSE(parse_jail_spec(huge));
}

TEST_CASE("an enter spec carries its holder and is refused without one", "[jail_spec]") {
  jail_spec s;
  s.mode = jail_mode::enter;
  s.program = "/bin/sh";
  s.argv = {"sh"};
  s.enter_pid = 4242;
  s.enter_start_time = 987654321;
  s.leave_running = true;
  auto back = parse_jail_spec(serialize(s));
  REQUIRE(back);
  CHECK(back->mode == jail_mode::enter);
  CHECK(back->enter_pid == 4242);
  CHECK(back->enter_start_time == 987654321u);
  CHECK(back->leave_running);
  // Without the start time an entering helper could not tell the holder from a reused pid.
  s.enter_start_time = 0;
  CHECK_FALSE(parse_jail_spec(serialize(s)));
  s.enter_start_time = 1;
  s.enter_pid = 0;
  CHECK_FALSE(parse_jail_spec(serialize(s)));
  s.mode = jail_mode::hold;
  CHECK(parse_jail_spec(serialize(s)));
}

TEST_CASE("status lines parse into events and garbage is ignored", "[status_line]") {
  auto h = parse_status_line("holding 31337 1234567");
  REQUIRE(h);
  CHECK(h->what == status_line::kind::holding);
  CHECK(h->pid == 31337);
  CHECK(h->start_time == 1234567u);
  CHECK_FALSE(parse_status_line("holding 31337"));
  CHECK_FALSE(parse_status_line("holding 31337 0"));
  auto e = parse_status_line("exited 256 1234 10 20 1");
  REQUIRE(e);
  CHECK(e->what == status_line::kind::exited);
  CHECK(e->wait_status == 256);
  CHECK(e->maxrss_kb == 1234);
  CHECK(e->terminated);
  auto f = parse_status_line("failed 2 exec /nope: No such file or directory");
  REQUIRE(f);
  CHECK(f->error_number == 2);
  CHECK(f->name == "exec");
  CHECK(f->message == "/nope: No such file or directory");
  CHECK_FALSE(parse_status_line("bogus 1"));
  CHECK_FALSE(parse_status_line("exited x"));
  CHECK_FALSE(parse_status_line(""));
}
