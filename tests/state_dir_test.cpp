// Runtimes sharing a state dir: instance claims, the scratch sweep that removes only a dead
// runtime's dirs, and lease temp files that a peer's sweep leaves alone.
#include <csignal>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "runtime_fixture.hpp"
#include "tiers/state_dir/instance_claim.hpp"
#include "tiers/jail/scratch_dir.hpp"
#include "tiers/state_dir/lease_record.hpp"

using namespace corral;
using corral::testing::temp_dir;

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void make_state(const std::string& state) {
  for (auto sub : {"", "/scratch", "/leases", "/owners"}) ::mkdir((state + sub).c_str(), 0700);
}

} // namespace

TEST_CASE("each runtime claims its own instance, held while it lives", "[state_dir]") {
  temp_dir dir("corral-claims-");
  auto state = dir.path();
  make_state(state);
  std::string first_name;
  {
    auto first = instance_claim::take(state);
    REQUIRE(first);
    auto second = instance_claim::take(state);
    REQUIRE(second);
    first_name = first->instance();
    CHECK(first->instance() != second->instance());
    CHECK(instance_owner(state, first->instance()) == owner_state::alive);
    CHECK(instance_owner(state, "neverclaimed") == owner_state::unknown);
  }
  // A clean end removes the claim.
  CHECK_FALSE(exists(state + "/owners/" + first_name));
}

TEST_CASE("the scratch sweep removes a dead runtime's dirs and keeps a live or unknown one's",
          "[state_dir]") {
  temp_dir dir("corral-scratch-");
  auto state = dir.path();
  make_state(state);
  auto live = instance_claim::take(state);
  REQUIRE(live);
  // A runtime killed with SIGKILL: a child takes a claim, makes a scratch dir, and dies.
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto claim = instance_claim::take(state);
    if (!claim) ::_exit(1);
    ::mkdir((state + "/scratch/corral-" + claim->instance() + "-1-abcdef").c_str(), 0700);
    std::string name = claim->instance() + "\n";
    (void)!::write(ready[1], name.data(), name.size());
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char buf[64] = {};
  auto n = ::read(ready[0], buf, sizeof buf - 1);
  ::close(ready[0]);
  REQUIRE(n > 1);
  std::string dead(buf, static_cast<std::size_t>(n - 1));
  auto dead_dir = state + "/scratch/corral-" + dead + "-1-abcdef";
  auto live_dir = state + "/scratch/corral-" + live->instance() + "-2-abcdef";
  auto unknown_dir = state + "/scratch/corral-0a1b2c-3-abcdef";  // an older runtime's: no claim
  ::mkdir(live_dir.c_str(), 0700);
  ::mkdir(unknown_dir.c_str(), 0700);
  // Alive: nothing of it goes.
  auto before = sweep_scratch(state);
  CHECK(before.removed == 0);
  CHECK(exists(dead_dir));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  auto after = sweep_scratch(state);
  CHECK(after.removed == 1);
  CHECK(after.claims_removed == 1);
  CHECK_FALSE(exists(dead_dir));
  CHECK_FALSE(exists(state + "/owners/" + dead));
  CHECK(exists(live_dir));
  CHECK(exists(unknown_dir));
  CHECK(instance_owner(state, live->instance()) == owner_state::alive);
}

TEST_CASE("a lease sweep leaves a peer's temp record being written alone", "[state_dir]") {
  temp_dir dir("corral-leases-");
  auto leases = dir.path();
  // A peer's record mid-write: young, so not a crashed writer's.
  auto temp = leases + "/abc123-1.4242.lease.tmp";
  { std::ofstream(temp) << "corral-lease 1\n"; }
  auto sum = sweep_leases(leases);
  CHECK(sum.errors.empty());
  CHECK(exists(temp));
  // Two writers never share a temp name; the record lands under its own name.
  REQUIRE(write_lease_record(leases, "abc123-2", {}));
  CHECK(exists(lease_record_path(leases, "abc123-2")));
  CHECK(remove_lease_record(leases, "abc123-2"));
}

TEST_CASE("a scratch dir's owner removes it once: at remove or when the last holder drops it",
          "[state_dir]") {
  temp_dir dir("corral-scratch-owner-");
  std::shared_ptr<scratch_dir_owner> owner;
  {
    auto made = scratch_dir_owner::make(dir.path(), "t-1", 1 << 20);
    REQUIRE(made);
    owner = std::move(*made);
  }
  std::string path = owner->path();
  REQUIRE(exists(path));
  { std::ofstream(path + "/main.py") << "print(1)\n"; }
  // Bounded where the runtime may mount (root): the tmpfs is a mount point of its own.
  if (scratch_dir_bounded()) {
    std::ifstream mounts("/proc/self/mountinfo");
    std::string line;
    bool mounted = false;
    while (std::getline(mounts, line)) mounted = mounted || line.find(" " + path + " ") != std::string::npos;
    CHECK(mounted);
  }

  SECTION("remove() removes now; a second remove and the destruction do nothing more") {
    CHECK_FALSE(owner->remove());
    CHECK_FALSE(exists(path));
    ::mkdir(path.c_str(), 0700);  // a later dir at the same path is not the owner's to remove
    CHECK_FALSE(owner->remove());
    owner.reset();
    CHECK(exists(path));
    ::rmdir(path.c_str());
  }
  SECTION("the last copy's destruction removes it (a plan copied into messages)") {
    auto copy = owner;
    owner.reset();
    CHECK(exists(path));
    copy.reset();
    CHECK_FALSE(exists(path));
  }
  SECTION("write_file writes a new file readable by others, and never over one that is there") {
    REQUIRE(owner->write_file("run.py", "print(2)\n"));
    std::ifstream written(path + "/run.py");
    std::string text;
    std::getline(written, text);
    CHECK(text == "print(2)");
    struct stat st {};
    REQUIRE(::stat((path + "/run.py").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0644);
    auto again = owner->write_file("main.py", "overwritten\n");
    REQUIRE_FALSE(again);
    CHECK(again.error().message.find("File exists") != std::string::npos);
    std::ifstream kept(path + "/main.py");
    std::getline(kept, text);
    CHECK(text == "print(1)");
    // A symlink planted at the name is not followed.
    REQUIRE(::symlink("/etc/passwd-corral-test", (path + "/link.py").c_str()) == 0);
    CHECK_FALSE(owner->write_file("link.py", "x"));
    CHECK_FALSE(exists("/etc/passwd-corral-test"));
  }
}
