// The MCP gateway's per-session decisions: each framed JSON-RPC message between an MCP
// client and its server passes here, and comes out forwarded (unchanged, or with hidden
// tools, resources and prompts taken out of a listing), answered by corral itself (a
// refused call: the server never sees it), or dropped (a cancellation of a request the
// server never got). Pure: no I/O and no actors, so it runs where the messages are (the I/O
// loop's relay, or the stdio session actor) and is tested alone. Its user writes what comes
// out and records the decisions (actors/mcp/mcp_audit_log.hpp).
//
// Pinning (actors/mcp/tool_pin.hpp) is a small state machine of its own:
//   unchecked ──the client's notifications/initialized, or its first tools/* request──▶
//   checking (corral lists the tools itself, every page, with ids of its own; the client's
//             tools/* requests wait behind it) ──▶ matched | changed
//   matched ──notifications/tools/list_changed──▶ checking (again)
// In `changed` with pin_action::refuse, tools/list and tools/call are answered with an
// error; with pin_action::hide only the tools whose definitions match the pin file remain.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/mcp/tool_pin.hpp"
#include "config/mcp_policy.hpp"

namespace corral {

// One decision, as the audit log writes it (one JSON line) and the daemon notifies it.
struct mcp_decision {
  std::int64_t unix_ms = 0;
  bool from_client = true;
  std::string method;  // for a response: the request's method
  std::string id;      // the JSON-RPC id as JSON text; empty for a notification
  std::string subject;  // the tool, resource URI or prompt name
  std::string args_sha256;
  std::optional<nlohmann::json> args;  // with audit_args
  std::string decision = "forward";  // forward, filter, refuse, drop, pin_match, pin_changed
  std::string rule;      // the rule that decided, as the operator wrote it
  std::optional<std::int64_t> latency_us;     // a response: since its request
  std::optional<std::uint64_t> result_bytes;  // a response's size
  std::string error;                          // a response's error, or why corral refused

  std::string json_line() const;
};

struct gate_output {
  std::vector<std::string> to_server;
  std::vector<std::string> to_client;
  std::vector<mcp_decision> decisions;
  std::vector<std::string> warnings;  // for the operator's log (a pin change, with its diff)
};

// What a gate is built from: the policy layers (the operator's first; a request's narrowing
// after it: every layer must pass) and, for each layer's pin_file, its definitions, read
// before the session starts so a missing file refuses the session.
struct gate_config {
  std::vector<mcp_policy> layers;
  std::vector<std::optional<tool_definitions>> pin_files;  // one per layer
};

// Reads each layer's pin file and checks the policies; the gate's config, or why not.
expected<gate_config> make_gate_config(std::vector<mcp_policy> layers);

class mcp_gate {
public:
  using clock = std::chrono::steady_clock;

  explicit mcp_gate(gate_config config);
  ~mcp_gate();
  mcp_gate(const mcp_gate&) = delete;
  mcp_gate& operator=(const mcp_gate&) = delete;

  void from_client(std::string message, clock::time_point now, gate_output& out);
  void from_server(std::string message, clock::time_point now, gate_output& out);

  // Every message gets a decision record (an audit file is kept); otherwise only what
  // corral changed or refused does.
  bool records_everything() const { return record_all_; }

  enum class pin_state : std::uint8_t { none, unchecked, checking, matched, changed };
  pin_state pins() const { return pin_state_; }

private:
  struct compiled_rules;
  struct pending {
    std::string method;
    std::string subject;
    clock::time_point since;
    bool own = false;
    bool cancelled = false;  // the client cancelled it; its id stays taken until answered
  };

  void client_request(std::string& message, nlohmann::json& msg, clock::time_point now, gate_output& out);
  void server_response(std::string& message, nlohmann::json& msg, pending p, clock::time_point now,
                       gate_output& out);
  std::string call_refusal(const nlohmann::json& params, const std::string& tool, clock::time_point now);
  std::string filter_refusal(std::string_view kind, const std::string& name) const;
  bool refuse_on_change() const;
  void refuse(const nlohmann::json& msg, int code, const std::string& why, const std::string& rule,
              mcp_decision d, gate_output& out);
  void start_pin_check(clock::time_point now, gate_output& out);
  void ask_tools(const std::string& cursor, clock::time_point now, gate_output& out);
  void pin_page(const nlohmann::json& msg, clock::time_point now, gate_output& out);
  void pin_verdict(const std::string& failed, clock::time_point now, gate_output& out);
  bool filter_listing(nlohmann::json& msg, const char* array, const char* key, std::string_view kind,
                      gate_output& out, mcp_decision& d);
  mcp_decision decision(bool from_client, const std::string& method, const nlohmann::json& msg) const;
  void record(mcp_decision d, gate_output& out) const;

  gate_config config_;
  std::unique_ptr<compiled_rules> rules_;
  bool record_all_ = false;
  bool audit_args_ = false;
  bool default_deny_ = false;

  std::map<std::string, pending> pending_;  // by the id's JSON text
  std::uint64_t calls_ = 0;
  std::vector<std::deque<clock::time_point>> rate_windows_;  // one per rate rule of every layer

  pin_state pin_state_ = pin_state::none;
  std::uint64_t own_ids_ = 0;
  std::uint32_t own_pages_ = 0;
  tool_definitions fetched_;     // the listing corral is taking
  tool_definitions verified_;    // the last listing checked against the pins
  std::set<std::string> usable_;  // of verified_: the tools that may be shown and called
  std::string change_summary_;    // why the pin check failed
  std::deque<std::string> held_;  // client messages waiting for a pin check
  nlohmann::json client_meta_;    // the client's latest request _meta (stateless clients)
};

} // namespace corral
