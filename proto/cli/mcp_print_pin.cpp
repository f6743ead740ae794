#include "proto/cli/mcp_print_pin.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <unistd.h>
#include <iostream>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "actors/atoms.hpp"
#include "actors/mcp/tool_pin.hpp"
#include "config/replace_file.hpp"
#include "config/version.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/ending.hpp"

namespace corral::cli {

namespace {

using json = nlohmann::json;
constexpr auto kStepBound = std::chrono::seconds(60);
constexpr std::uint32_t kMaxPages = 1000;

// One request and its answer, over the session's messages; the server's own requests and
// notifications in between are answered with an error or passed over.
class pin_client {
public:
  pin_client(caf::scoped_actor& self, caf::actor session) : self_(self), session_(std::move(session)) {}

  expected<json> call(const std::string& method, json params) {
    json req = {{"jsonrpc", "2.0"}, {"id", ++next_id_}, {"method", method}, {"params", std::move(params)}};
    if (auto s = send(req); !s) return s.error();
    auto deadline = std::chrono::steady_clock::now() + kStepBound;
    for (;;) {
      auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero())
        return make_failure(failure_kind::refused, "the server did not answer " + method + " within 60 s");
      std::optional<json> got;
      std::optional<failure> ended;
      self_->receive(
          [&](session_message& m) {
            self_->send(session_, ack_atom::value, std::uint64_t{1});
            auto msg = json::parse(m.body, nullptr, false);
            if (!msg.is_object()) return;
            if (msg.contains("method") && msg.contains("id")) {  // the server asks something: not here
              json no = {{"jsonrpc", "2.0"}, {"id", msg["id"]},
                         {"error", {{"code", -32601}, {"message", "corral --print-pin answers nothing"}}}};
              (void)send(no);
              return;
            }
            if (msg.value("id", json()) == json(next_id_)) got = std::move(msg);
          },
          [&](session_stderr& e) { std::cerr << e.bytes; },
          [&](session_refused& r) { std::cerr << "corral: a server message was not taken: " << r.error.message << "\n"; },
          [&](session_gate&) {},
          [&](session_network&) {},
          [&](session_ended& e) {
            ended = make_failure(failure_kind::refused, "the server ended (" + std::string(to_string(e.reason)) +
                                                            (e.detail.empty() ? "" : ": " + e.detail) + ") before answering " + method);
          },
          caf::after(std::chrono::duration_cast<std::chrono::milliseconds>(left)) >> [] {});
      if (ended) return *ended;
      if (!got) continue;
      if (got->contains("error"))
        return make_failure(failure_kind::refused, method + " failed: " + (*got)["error"].dump());
      return (*got)["result"];
    }
  }

  status send(const json& message) {
    std::optional<failure> refused;
    self_->request(session_, std::chrono::seconds(60), send_atom::value, message.dump())
        .receive([&](session_reply& r) { if (!r.ok) refused = r.error; },
                 [&](caf::error& e) { refused = make_failure(failure_kind::internal, caf::to_string(e)); });
    if (refused) return *refused;
    return ok();
  }

private:
  caf::scoped_actor& self_;
  caf::actor session_;
  int next_id_ = 0;
};

expected<tool_definitions> list_tools(pin_client& client) {
  json init = {{"protocolVersion", "2025-06-18"},
               {"capabilities", json::object()},
               {"clientInfo", {{"name", "corral-print-pin"}, {"version", corral_version()}}}};
  if (auto r = client.call("initialize", init); !r) return r.error();
  if (auto s = client.send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}); !s) return s.error();
  tool_definitions defs;
  std::string cursor;
  for (std::uint32_t page = 0; page < kMaxPages; ++page) {
    json params = json::object();
    if (!cursor.empty()) params["cursor"] = cursor;
    auto r = client.call("tools/list", params);
    if (!r) return r.error();
    if (!r->is_object() || !r->contains("tools")) return make_failure(failure_kind::refused, "tools/list gave no tools");
    add_tools((*r)["tools"], defs);
    auto next = r->find("nextCursor");
    cursor = next != r->end() && next->is_string() ? next->get<std::string>() : std::string();
    if (cursor.empty()) return defs;
  }
  return make_failure(failure_kind::refused, "the server's tool listing did not end after 1000 pages");
}

} // namespace

int print_mcp_pin(runtime& rt, const session_request& request, const std::string& write_to) {
  caf::scoped_actor owner{rt.system()};
  auto session = rt.open_session(request, caf::actor_cast<caf::actor>(owner));
  if (!session) {
    std::cerr << "corral: " << session.error().describe() << "\n";
    return failure_status(session.error());
  }
  pin_client client(owner, session->actor);
  auto defs = list_tools(client);
  owner->send(session->actor, close_atom::value);
  // The server's end, bounded: its grace is the session's own.
  bool ended = false;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ended && std::chrono::steady_clock::now() < until)
    owner->receive([&](session_ended&) { ended = true; }, [](caf::message&) {},
                   caf::after(std::chrono::milliseconds(200)) >> [] {});
  if (!ended) owner->send(session->actor, cancel_atom::value);
  if (!defs) {
    std::cerr << "corral: could not list the server's tools: " << defs.error().message << "\n";
    return kExitRefused;
  }
  if (!write_to.empty() &&
      !replace_file(write_to, write_to + ".corral-" + std::to_string(::getpid()), pin_file_text(*defs), false)) {
    std::cerr << "corral: --write-pin " << write_to << ": " << std::strerror(errno) << "\n";
    return kExitRefused;
  }
  std::cout << pin_digest(*defs) << "\n";
  std::cerr << "corral: " << defs->size() << " tools pinned" << (write_to.empty() ? "" : ", their definitions in " + write_to)
            << "\n";
  return 0;
}

} // namespace corral::cli
