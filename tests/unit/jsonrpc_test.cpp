// The JSON-RPC framing alone: parsing, errors, serialising, the line splitter, and the
// exec params decoder. No sockets.
#include <set>

#include <catch2/catch.hpp>

#include "proto/daemon/exec_job.hpp"
#include "proto/jsonrpc/exec_params.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"

using namespace corral;
using nlohmann::json;

namespace {

rpc::error parse_error(const std::string& line) {
  auto r = rpc::parse_request(line);
  REQUIRE(std::holds_alternative<rpc::error>(r));
  return std::get<rpc::error>(r);
}

rpc::request parse_ok(const std::string& line) {
  auto r = rpc::parse_request(line);
  REQUIRE(std::holds_alternative<rpc::request>(r));
  return std::get<rpc::request>(r);
}

} // namespace

TEST_CASE("a well-formed request parses with its id, method and params", "[jsonrpc]") {
  auto r = parse_ok(R"({"jsonrpc":"2.0","id":7,"method":"exec","params":{"argv":["true"]}})");
  CHECK(r.id == 7);
  CHECK_FALSE(r.notification);
  CHECK(r.method == "exec");
  CHECK(r.params["argv"][0] == "true");
  auto s = parse_ok(R"({"jsonrpc":"2.0","id":"a","method":"health"})");
  CHECK(s.id == "a");
  CHECK(s.params.is_object());
  CHECK(parse_ok(R"({"jsonrpc":"2.0","method":"health"})").notification);
}

TEST_CASE("malformed lines get the standard codes", "[jsonrpc]") {
  CHECK(parse_error("{not json").code == rpc::kParseError);
  CHECK(parse_error("").code == rpc::kParseError);
  CHECK(parse_error(std::string(100000, '[')).code == rpc::kParseError);  // depth, not a stack overflow
  CHECK(parse_error("\"\xff\"").code == rpc::kParseError);               // not UTF-8
  CHECK(parse_error("[1]").code == rpc::kInvalidRequest);                 // batch
  CHECK(parse_error("42").code == rpc::kInvalidRequest);
  CHECK(parse_error(R"({"id":1,"method":"x"})").code == rpc::kInvalidRequest);  // no jsonrpc
  CHECK(parse_error(R"({"jsonrpc":"1.0","id":1,"method":"x"})").code == rpc::kInvalidRequest);
  CHECK(parse_error(R"({"jsonrpc":"2.0","id":1,"method":5})").code == rpc::kInvalidRequest);
  CHECK(parse_error(R"({"jsonrpc":"2.0","id":1.5,"method":"x"})").code == rpc::kInvalidRequest);
  CHECK(parse_error(R"({"jsonrpc":"2.0","id":{},"method":"x"})").code == rpc::kInvalidRequest);
  CHECK(parse_error(R"({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})").code == rpc::kInvalidParams);
  CHECK(parse_error(R"({"jsonrpc":"2.0","id":1,"method":"x","params":3})").code == rpc::kInvalidRequest);
  // The id is echoed when it could be read.
  CHECK(parse_error(R"({"jsonrpc":"2.0","id":9,"method":5})").id == 9);
}

TEST_CASE("failure kinds map one-to-one onto codes and back", "[jsonrpc]") {
  std::set<int> codes;
  for (auto k : {failure_kind::invalid_request, failure_kind::refused, failure_kind::tier_unavailable,
                 failure_kind::limit_exceeded, failure_kind::config_error, failure_kind::spawn_failed,
                 failure_kind::not_found, failure_kind::conflict, failure_kind::internal}) {
    codes.insert(rpc::code_for(k));
    CHECK(rpc::kind_for(rpc::code_for(k)) == k);
  }
  CHECK(codes.size() == 9);
  CHECK(rpc::code_for(failure_kind::conflict) == rpc::kConflict);
  CHECK(rpc::code_for(failure_kind::not_found) == rpc::kNotFound);
  CHECK(rpc::code_for(failure_kind::internal) == rpc::kInternalError);
  CHECK(rpc::code_for(failure_kind::refused) == rpc::kRefused);
}

TEST_CASE("serialised lines are one JSON object each, newline-terminated", "[jsonrpc]") {
  auto line = rpc::response_line(3, {{"ok", true}});
  REQUIRE(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  auto j = json::parse(line);
  CHECK(j["jsonrpc"] == "2.0");
  CHECK(j["id"] == 3);
  CHECK(j["result"]["ok"] == true);
  auto e = json::parse(rpc::error_line(rpc::error_from(make_failure(failure_kind::refused, "no"), "x")));
  CHECK(e["error"]["code"] == rpc::kRefused);
  CHECK(e["error"]["data"]["kind"] == "refused by policy");
  CHECK(e["id"] == "x");
  auto n = json::parse(rpc::notification_line("exec.output", {{"id", 1}}));
  CHECK_FALSE(n.contains("id"));
  CHECK(n["method"] == "exec.output");
}

TEST_CASE("the line splitter frames, strips CR, and skips an oversized line once", "[jsonrpc]") {
  rpc::line_splitter s(10);
  auto a = s.feed("ab");
  CHECK(a.empty());
  auto b = s.feed("c\r\nde\n");
  REQUIRE(b.size() == 2);
  CHECK(b[0].line == "abc");
  CHECK(b[1].line == "de");
  auto c = s.feed(std::string(8, 'x'));
  CHECK(c.empty());
  auto d = s.feed(std::string(100, 'y'));  // past the limit: reported once, then skipped
  REQUIRE(d.size() == 1);
  CHECK(d[0].oversized);
  CHECK(s.feed(std::string(1000, 'z')).empty());
  auto e = s.feed("tail\nok\n");  // the oversized line ends at its newline; the next is whole
  REQUIRE(e.size() == 1);
  CHECK(e[0].line == "ok");
}

TEST_CASE("exec params decode strictly", "[jsonrpc]") {
  auto p = exec_params_from_json({{"argv", {"echo", "hi"}}, {"timeout", 1.5}, {"env", {{"A", "b"}}}, {"stream", false}});
  REQUIRE(p);
  CHECK(p->request.language == "argv");
  CHECK(p->request.argv.size() == 2);
  CHECK(p->request.timeout->count() == 1500);
  CHECK(p->request.env.at("A") == "b");
  CHECK_FALSE(p->stream);
  auto code = exec_params_from_json({{"code", "echo hi"}});
  REQUIRE(code);
  CHECK(code->request.language == "command");
  auto bin = exec_params_from_json({{"argv", {"cat"}}, {"stdin_base64", "/wA="}});
  REQUIRE(bin);
  CHECK(*bin->request.stdin_data == std::string("\xff\x00", 2));
  for (auto bad : {json{{"argv", "ls"}}, json{{"argv", {1}}}, json{{"timeout", -1}}, json{{"timeout", "5"}},
                   json{{"memory_limit", 1.5}}, json{{"env", {{"A", 1}}}}, json{{"argv", {"x"}}, {"bogus", 1}},
                   json{{"stdin_base64", "!!"}}, json{{"stdin", "a"}, {"stdin_base64", "YQ=="}}}) {
    auto r = exec_params_from_json(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == failure_kind::invalid_request);
  }
  auto round = exec_params_from_json(exec_params_to_json(bin->request, true));
  REQUIRE(round);
  CHECK(*round->request.stdin_data == *bin->request.stdin_data);
}

TEST_CASE("live output is cut only at character boundaries", "[jsonrpc]") {
  utf8_carry carry;
  std::string euro = "\xE2\x82\xAC";
  CHECK(carry.take("a" + euro.substr(0, 1)) == "a");
  CHECK(carry.take(euro.substr(1)) == euro);
  CHECK(carry.take("\xE2\x82").empty());
  CHECK(carry.flush() == "\xE2\x82");
  auto n = output_notification(1, "stdout", "\xff");
  CHECK(n["data_base64"] == "/w==");
  CHECK(n["data"] == "\xEF\xBF\xBD");
}

TEST_CASE("a key given twice in one object is an error, at any depth, not the last value", "[jsonrpc]") {
  auto top = parse_error(R"({"jsonrpc":"2.0","id":1,"id":2,"method":"health"})");
  CHECK(top.code == rpc::kInvalidRequest);
  CHECK(top.message.find("\"id\" appears twice") != std::string::npos);
  auto nested = parse_error(R"({"jsonrpc":"2.0","id":1,"method":"exec","params":{"argv":["true"],"argv":["false"]}})");
  CHECK(nested.message.find("\"argv\" appears twice") != std::string::npos);
  // The same key in sibling objects is fine: each object has its own keys.
  auto fine = parse_ok(R"({"jsonrpc":"2.0","id":1,"method":"exec","params":{"env":{"A":"1"},"x":[{"k":1},{"k":2}]}})");
  CHECK(fine.params["x"][1]["k"] == 2);
}
