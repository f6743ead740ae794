// The workspace methods' JSON (proto/jsonrpc/workspace_json.hpp): strict params, and
// results that show the jail's paths only.
#include <csignal>

#include <catch2/catch.hpp>

#include "proto/jsonrpc/result_json.hpp"
#include "proto/jsonrpc/workspace_json.hpp"

using namespace corral;
using nlohmann::json;

TEST_CASE("workspace.create params narrow, in seconds and bytes, and unknown members are refused", "[workspace_json]") {
  auto o = workspace_options_from_json(
      {{"name", "build"}, {"idle_timeout", 1.5}, {"lifetime", 3600}, {"memory_limit", 1 << 20}, {"keep_files", true}});
  REQUIRE(o);
  CHECK(o->name == "build");
  CHECK(o->idle_timeout == std::chrono::milliseconds(1500));
  CHECK(o->lifetime == std::chrono::milliseconds(3'600'000));
  CHECK(o->memory_bytes == (1u << 20));
  CHECK(o->keep_files);
  CHECK_FALSE(o->pids);
  // And back, as a client sends it.
  auto again = workspace_options_from_json(workspace_options_to_json(*o));
  REQUIRE(again);
  CHECK(again->idle_timeout == o->idle_timeout);
  CHECK(again->memory_bytes == o->memory_bytes);

  auto typo = workspace_options_from_json({{"idle_timeuot", 5}});
  REQUIRE_FALSE(typo);
  CHECK(typo.error().message.find("idle_timeuot") != std::string::npos);
  CHECK_FALSE(workspace_options_from_json({{"idle_timeout", -1}}));
  CHECK_FALSE(workspace_options_from_json({{"memory_limit", "1g"}}));
  CHECK_FALSE(workspace_options_from_json({{"name", 7}}));
}

TEST_CASE("file calls take only their own members, and data as text or base64", "[workspace_json]") {
  auto write = file_call_from_json("write", {{"workspace", "w"}, {"path", "a/b"}, {"data_base64", base64_encode(std::string("\0\xff", 2))},
                                             {"mode", 0600}, {"parents", true}});
  REQUIRE(write);
  CHECK(write->what == file_call::op::write);
  CHECK(write->data == std::string("\0\xff", 2));
  CHECK(write->mode == 0600);
  CHECK(write->parents);
  // Round trip through the client's encoder: the bytes survive.
  auto again = file_call_from_json("write", file_call_to_json("w", *write));
  REQUIRE(again);
  CHECK(again->data == write->data);

  CHECK(file_call_from_json("list", {{"workspace", "w"}})->path == ".");
  CHECK(file_call_from_json("mkdir", {{"workspace", "w"}, {"path", "d"}})->mode == 0755);
  auto move = file_call_from_json("move", {{"workspace", "w"}, {"from", "a"}, {"to", "b"}});
  REQUIRE(move);
  CHECK((move->path == "a" && move->to == "b"));

  // Members of another op, missing ones, bad values and unknown ops are refused by name.
  auto offset_on_write = file_call_from_json("write", {{"path", "a"}, {"data", "x"}, {"offset", 3}});
  REQUIRE_FALSE(offset_on_write);
  CHECK(offset_on_write.error().message.find("offset") != std::string::npos);
  CHECK_FALSE(file_call_from_json("write", {{"path", "a"}}));
  CHECK_FALSE(file_call_from_json("write", {{"path", "a"}, {"data", "x"}, {"data_base64", "eA=="}}));
  CHECK_FALSE(file_call_from_json("write", {{"path", "a"}, {"data", "x"}, {"mode", 01000}}));
  CHECK_FALSE(file_call_from_json("read", {{"path", "a"}, {"length", 0}}));
  CHECK_FALSE(file_call_from_json("read", {{"path", "a"}, {"length", (4 << 20) + 1}}));
  CHECK_FALSE(file_call_from_json("stat", json::object()));
  CHECK_FALSE(file_call_from_json("move", {{"from", "a"}}));
  auto unknown = file_call_from_json("chmod", {{"path", "a"}});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message.find("chmod") != std::string::npos);

  CHECK(*workspace_ref_param({{"workspace", "build"}}) == "build");
  CHECK_FALSE(workspace_ref_param(json::object()));
  CHECK_FALSE(workspace_ref_param({{"workspace", ""}}));
}

TEST_CASE("results name the jail's paths, never the host's, and bytes that are not UTF-8 as base64", "[workspace_json]") {
  tree_entry e;
  e.path = "src/main.py";
  e.name = "main.py";
  e.type = "file";
  e.size = 12;
  e.mode = 0644;
  auto j = to_json(e, "/work");
  CHECK(j["path"] == "/work/src/main.py");
  CHECK(j["mode"] == 0644);
  tree_entry root;
  root.path = ".";
  root.type = "dir";
  CHECK(to_json(root, "/work")["path"] == "/work");

  file_call read;
  read.what = file_call::op::read;
  file_reply reply;
  reply.ok = true;
  reply.chunk.data = std::string("\x80\x81", 2);
  reply.chunk.eof = true;
  reply.chunk.size = 2;
  auto r = to_json(read, reply, "/work");
  CHECK_FALSE(r.contains("data"));
  CHECK(r["data_base64"] == base64_encode(reply.chunk.data));
  CHECK(r["eof"] == true);

  tree_change c;
  c.what = tree_change::kind::modified;
  c.entry.path = "a.txt";
  c.entry.type = 'f';
  c.entry.sha256 = std::string(64, 'a');
  c.before = c.entry;
  c.before->sha256 = std::string(64, 'b');
  auto cj = to_json(c, "/work");
  CHECK(cj["change"] == "modified");
  CHECK(cj["path"] == "/work/a.txt");
  CHECK(cj["type"] == "file");
  CHECK(cj["before"]["sha256"] == std::string(64, 'b'));

  workspace_info info;
  info.record.id = "w-0123456789ab";
  info.record.name = "build";
  info.record.memory_bytes = 1 << 20;
  info.not_enforced = {"workspace_disk_quota"};
  auto wj = to_json(info);
  CHECK(wj["workspace"] == "w-0123456789ab");
  CHECK(wj["limits"]["memory_limit"] == (1 << 20));
  CHECK(wj["not_enforced"][0] == "workspace_disk_quota");
  CHECK_FALSE(wj.dump().find("/var/") != std::string::npos);
}

TEST_CASE("signals are taken by number or name, anything else is refused by name", "[workspace_json]") {
  using nlohmann::json;
  CHECK(signal_param(json(9), "signal").value() == SIGKILL);
  CHECK(signal_param(json("term"), "signal").value() == SIGTERM);
  CHECK(signal_param(json("SIGUSR1"), "signal").value() == SIGUSR1);
  for (auto bad : {json(0), json(65), json(-9), json("NOPE"), json(""), json(1.5), json::array()}) {
    auto s = signal_param(bad, "signal");
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("\"signal\""));
  }
}

TEST_CASE("a process of a workspace shows its pid inside, state and start, and never a host path", "[workspace_json]") {
  workspace_process p;
  p.pid = 7;
  p.ppid = 1;
  p.command = "python3 -m http.server";
  p.state = 'S';
  p.started_at = 1700000000;
  auto j = to_json(p);
  CHECK(j == nlohmann::json{{"pid", 7}, {"ppid", 1}, {"command", "python3 -m http.server"}, {"state", "S"},
                            {"started_at", 1700000000}});
}
