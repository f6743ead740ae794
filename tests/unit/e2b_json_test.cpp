// The E2B wire's pure parts (proto/e2b/e2b_json.hpp): base64 both ways, the paths the SDK
// sends mapped into a sandbox's files and back, EntryInfo, and the error shapes.
#include <catch2/catch.hpp>

#include "proto/e2b/e2b_json.hpp"
#include "proto/e2b/e2b_server.hpp"

using namespace corral;

TEST_CASE("base64 round-trips every length, takes proto3 JSON's forms, and refuses what is not base64", "[e2b]") {
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    auto text = base64_encode(bytes);
    CHECK(text.size() % 4 == 0);
    for (auto accept : {base64_input::strict, base64_input::proto3_json}) {
      auto back = base64_decode(text, accept);
      REQUIRE(back);
      CHECK(*back == bytes);
    }
    bytes += char(i * 37);
  }
  auto proto3 = [](std::string_view text) { return base64_decode(text, base64_input::proto3_json); };
  CHECK(base64_encode("hi\n") == "aGkK");
  CHECK(*proto3("aGkK") == "hi\n");
  CHECK(*proto3("aGk") == "hi");  // unpadded, as proto3 JSON allows
  CHECK(*proto3("-_8") == *base64_decode("+/8="));  // the URL-safe alphabet too
  CHECK(!proto3("a*b="));
  CHECK(!proto3("a"));
  // The daemon's members stay strict: padding required, one alphabet.
  CHECK(!base64_decode("aGk"));
  CHECK(!base64_decode("-_8="));
  CHECK(!base64_decode("aG=k"));
}

TEST_CASE("paths the SDK sends land in the sandbox's files or are refused", "[e2b]") {
  CHECK(workspace_relative("/home/user") == std::optional<std::string>("."));
  CHECK(workspace_relative("/home/user/a/b.txt") == std::optional<std::string>("a/b.txt"));
  CHECK(workspace_relative("/work/a") == std::optional<std::string>("a"));
  CHECK(workspace_relative("rel/x") == std::optional<std::string>("rel/x"));
  CHECK(workspace_relative("") == std::optional<std::string>("."));
  // Outside: refused here; `..` escapes are refused by the files API beneath the root.
  CHECK(!workspace_relative("/etc/shadow"));
  CHECK(!workspace_relative("/home/username/x"));
  CHECK(!workspace_relative("/home"));
  CHECK(!workspace_relative("/tmp/x"));
  CHECK(sandbox_path(".") == "/home/user");
  CHECK(sandbox_path("a/b") == "/home/user/a/b");
}

TEST_CASE("EntryInfo carries the SDK's names, enum strings and int64 as a string", "[e2b]") {
  tree_entry e;
  e.path = "d/f.txt";
  e.name = "f.txt";
  e.type = "file";
  e.size = 12345678901;
  e.mode = 0644;
  e.mtime_ns = 1'700'000'000'123'000'000;
  auto j = entry_json(e);
  CHECK(j["name"] == "f.txt");
  CHECK(j["type"] == "FILE_TYPE_FILE");
  CHECK(j["path"] == "/home/user/d/f.txt");
  CHECK(j["size"] == "12345678901");
  CHECK(j["permissions"] == "-rw-r--r--");
  CHECK(j["modifiedTime"] == "2023-11-14T22:13:20.123Z");
  e.type = "dir";
  e.mode = 0755;
  CHECK(entry_json(e)["type"] == "FILE_TYPE_DIRECTORY");
  CHECK(entry_json(e)["permissions"] == "drwxr-xr-x");
  e.type = "fifo";
  CHECK(entry_json(e)["type"] == "FILE_TYPE_UNSPECIFIED");  // the SDK's list drops these
}

TEST_CASE("errors come in the control plane's and Connect's shapes", "[e2b]") {
  auto c = control_error(404, "sandbox x not found");
  CHECK(c.status == 404);
  CHECK(nlohmann::json::parse(c.body) == nlohmann::json{{"code", 404}, {"message", "sandbox x not found"}});
  auto n = connect_error("not_found", "no such file");
  CHECK(n.status == 404);
  CHECK(nlohmann::json::parse(n.body)["code"] == "not_found");
  CHECK(connect_error("already_exists", "x").status == 409);
  CHECK(connect_error("unimplemented", "x").status == 501);
  CHECK(stream_end() == "{}");
  CHECK(nlohmann::json::parse(stream_end("internal", "boom"))["error"]["message"] == "boom");
  CHECK(std::string(connect_code(failure_kind::not_found)) == "not_found");
  CHECK(std::string(connect_code(failure_kind::invalid_request)) == "invalid_argument");
}

TEST_CASE("the listen address parses and only loopback counts as local", "[e2b]") {
  auto a = parse_e2b_address("127.0.0.1:8080");
  REQUIRE(a);
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 8080);
  auto v6 = parse_e2b_address("[::1]:0");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->label() == "[::1]:0");
  auto bare = parse_e2b_address(":49983");
  REQUIRE(bare);
  CHECK(bare->host == "127.0.0.1");
  CHECK(!parse_e2b_address("localhost"));
  CHECK(!parse_e2b_address("1.2.3.4:70000"));
  CHECK(is_loopback_host("127.0.0.1"));
  CHECK(is_loopback_host("::1"));
  CHECK(!is_loopback_host("0.0.0.0"));
  CHECK(!is_loopback_host("10.0.0.1"));
}
