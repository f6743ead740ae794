// A workspace's record: round trip, refusals of what corral did not write, names and ids.
#include <fstream>

#include <catch2/catch.hpp>

#include "tests/runtime_fixture.hpp"
#include "tiers/workspace/workspace_record.hpp"

using namespace corral;

TEST_CASE("a workspace record round-trips through its file", "[workspace]") {
  corral::testing::temp_dir dir;
  workspace_record r;
  r.id = new_workspace_id();
  r.name = "build-1";
  r.owner = "uid:1000";
  r.created_at = 1'700'000'000;
  r.ends_at = 1'700'086'400;
  r.idle_timeout_ms = 1'800'000;
  r.memory_bytes = 256ull << 20;
  r.cpu_cores = 0.5;
  REQUIRE(write_record(dir.path(), r));
  auto back = read_record(dir.path());
  REQUIRE(back);
  CHECK(back->id == r.id);
  CHECK(back->name == "build-1");
  CHECK(back->owner == "uid:1000");
  CHECK(back->ends_at == r.ends_at);
  CHECK(back->memory_bytes == r.memory_bytes);
  CHECK_FALSE(back->pids);
  CHECK(back->cpu_cores == 0.5);
  CHECK_FALSE(back->ended);
  CHECK(back->lost.empty());

  // What was lost at a restart stays in the record.
  r.lost = {{"terminal", {"sh"}, "t4", 0, "", 1'700'000'100}, {"process", {}, "", 7, "python3 -m http.server", 1'700'000'200}};
  r.lost_at = 1'700'000'300;
  REQUIRE(write_record(dir.path(), r));
  back = read_record(dir.path());
  REQUIRE(back);
  REQUIRE(back->lost.size() == 2);
  CHECK(back->lost[0].kind == "terminal");
  CHECK(back->lost[0].terminal == "t4");
  CHECK(back->lost[0].argv == std::vector<std::string>{"sh"});
  CHECK(back->lost[1].pid == 7);
  CHECK(back->lost[1].command == "python3 -m http.server");
  CHECK(back->lost_at == 1'700'000'300);
}

TEST_CASE("the running journal is rewritten in place, blanked when empty, and taken once", "[workspace]") {
  corral::testing::temp_dir dir;
  CHECK(take_running(dir.path())->empty());  // no file: nothing ran
  std::vector<running_item> items{{"exec", {"make", "test"}, "", 0, "", 10}, {"session", {"mcp-server"}, "", 0, "", 11}};
  {
    running_journal journal(dir.path());
    REQUIRE(journal.write(items));
    items.pop_back();
    REQUIRE(journal.write(items));  // shorter: padded over the longer one, still one list
  }
  auto taken = take_running(dir.path());
  REQUIRE(taken);
  REQUIRE(taken->size() == 1);
  CHECK((*taken)[0].argv == std::vector<std::string>{"make", "test"});
  CHECK(take_running(dir.path())->empty());  // taken: gone
  {
    running_journal journal(dir.path());
    REQUIRE(journal.write(items));
    REQUIRE(journal.write({}));
  }
  CHECK(take_running(dir.path())->empty());  // emptied: nothing ran
  CHECK(!corral::testing::exists(dir / "running.json"));
  {
    running_journal journal(dir.path());
    REQUIRE(journal.write(items));
  }
  REQUIRE(clear_running(dir.path()));
  CHECK(!corral::testing::exists(dir / "running.json"));
  // A damaged journal is said, and left where it is.
  std::ofstream(dir / "running.json") << "{\"version\": 9}";
  CHECK(!take_running(dir.path()));
  CHECK(corral::testing::exists(dir / "running.json"));
}

TEST_CASE("a record corral did not write is refused, naming why", "[workspace]") {
  CHECK_THAT(parse_record("{").error().message, Catch::Contains("not a JSON object"));
  CHECK_THAT(parse_record(R"({"version":2,"id":"w-0123456789ab"})").error().message, Catch::Contains("version 2"));
  CHECK_THAT(parse_record(R"({"version":1,"id":"../etc","owner":"x","created_at":0,"ends_at":0,"idle_timeout_ms":0})")
                 .error()
                 .message,
             Catch::Contains("is not one corral makes"));
  CHECK_THAT(parse_record(R"({"version":1,"id":"w-0123456789ab"})").error().message, Catch::Contains("owner"));
}

TEST_CASE("workspace names and ids", "[workspace]") {
  for (const char* good : {"a", "build-1", "x.y_z", "0abc"}) CHECK(valid_workspace_name(good));
  for (const char* bad : {"", "-a", ".a", "A", "a/b", "a b", "..", "w-0123456789ab"}) {
    INFO(bad);
    CHECK_FALSE(valid_workspace_name(bad));
  }
  CHECK_FALSE(valid_workspace_name(std::string(64, 'a')));
  auto id = new_workspace_id();
  CHECK(valid_workspace_id(id));
  CHECK(id != new_workspace_id());
  CHECK_FALSE(valid_workspace_id("w-0123456789AB"));
  CHECK_FALSE(valid_workspace_id("w-0123456789a"));
}
