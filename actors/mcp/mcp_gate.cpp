#include "actors/mcp/mcp_gate.hpp"

#include <algorithm>
#include <regex.h>

#include "config/sha256.hpp"

namespace corral {

namespace {

using json = nlohmann::json;

// A client that sends more requests than this without answers is refused, not tracked
// loosely: an untracked tools/list answer would reach it unfiltered.
constexpr std::size_t kMaxPending = 4096;
constexpr std::size_t kMaxHeld = 1024;
constexpr std::size_t kMaxHeldBytes = 16 * 1024 * 1024;
constexpr std::uint32_t kMaxPinPages = 1000;
// Tool schemas nest a few levels; a hundred and more is an attack on the recursion.
constexpr int kMaxDepth = 64;
const std::string kOwnIdPrefix = "corral-pin-";

// JSON-RPC error codes: -32602 for a tool the client may not know of (as MCP answers an
// unknown tool), -32001 for a call corral refused by a rule.
constexpr int kInvalidParams = -32602;
constexpr int kRefusedByPolicy = -32001;
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;

const std::set<std::string, std::less<>> kKnownClientMethods = {
    "initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/templates/list",
    "resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get",
    "completion/complete", "logging/setLevel", "notifications/initialized", "notifications/cancelled",
    "notifications/progress", "notifications/roots/list_changed",
    // 2026-07-28: stateless discovery; tasks (a call's result fetched later: the policy
    // applied to the tools/call that started it).
    "server/discover", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel"};
const std::set<std::string, std::less<>> kKnownServerMethods = {
    "ping", "sampling/createMessage", "roots/list", "elicitation/create", "notifications/message",
    "notifications/progress", "notifications/cancelled", "notifications/tools/list_changed",
    "notifications/resources/list_changed", "notifications/resources/updated", "notifications/prompts/list_changed",
    "notifications/tasks/status"};

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string str_field(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& params_of(const json& msg) {
  static const json empty = json::object();
  auto it = msg.find("params");
  return it != msg.end() && it->is_object() ? *it : empty;
}

// Deeper than `max` arrays and objects: copying or writing such a message recurses once per
// level, so it is refused before it is parsed.
bool nested_deeper_than(std::string_view text, int max) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

// What goes on the wire is what corral parsed and checked, written again: never the bytes it
// came in. A raw CR between tokens (a line end to a reader that splits on it) and a key given
// twice (read first-wins by some parsers, last-wins by this one) cannot then carry another
// message, or another value, past the check.
std::string wire(const json& msg) { return msg.dump(-1, ' ', false, json::error_handler_t::replace); }

// At most `n` bytes of `s`, not cutting a UTF-8 character (what is cut goes into notifications
// whose writer refuses broken UTF-8).
std::string clip(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "…";
}

// Lexically inside `dir`: absolute, and ".." never climbs out of it.
bool lexically_under(const std::string& path, const std::string& dir) {
  if (path.empty() || path.front() != '/' || path.find('\0') != std::string::npos) return false;
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i <= path.size()) {
    auto j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    auto part = path.substr(i, j - i);
    if (part == "..") {
      if (parts.empty()) return false;
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string norm;
  for (auto& p : parts) norm += "/" + p;
  if (norm.empty()) norm = "/";
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return norm == base || base == "/" || norm.rfind(base + "/", 0) == 0;
}

} // namespace

std::string mcp_decision::json_line() const {
  json j;
  j["time_ms"] = unix_ms;
  j["direction"] = from_client ? "client" : "server";
  if (!method.empty()) j["method"] = method;
  if (!id.empty()) j["id"] = json::parse(id, nullptr, false);
  if (!subject.empty()) j["subject"] = subject;
  if (!args_sha256.empty()) j["args_sha256"] = args_sha256;
  if (args) j["args"] = *args;
  j["decision"] = decision;
  if (!rule.empty()) j["rule"] = rule;
  if (latency_us) j["latency_us"] = *latency_us;
  if (result_bytes) j["result_bytes"] = *result_bytes;
  if (!error.empty()) j["error"] = error;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Each layer's argument rules with their regexes compiled once.
struct mcp_gate::compiled_rules {
  struct rule {
    argument_rule spec;
    std::optional<regex_t> re;
  };
  std::vector<rule> rules;
  ~compiled_rules() {
    for (auto& r : rules)
      if (r.re) ::regfree(&*r.re);
  }
};

expected<gate_config> make_gate_config(std::vector<mcp_policy> layers) {
  gate_config c;
  for (auto& layer : layers) {
    if (auto s = check_mcp_policy(layer); !s) return s.error();
    std::optional<tool_definitions> defs;
    if (!layer.pin_file.empty()) {
      auto read = read_pin_file(layer.pin_file);
      if (!read) return read.error();
      defs = std::move(*read);
    }
    c.pin_files.push_back(std::move(defs));
  }
  c.layers = std::move(layers);
  return c;
}

mcp_gate::mcp_gate(gate_config config) : config_(std::move(config)), rules_(std::make_unique<compiled_rules>()) {
  for (const auto& layer : config_.layers) {
    record_all_ = record_all_ || !layer.audit.empty();
    audit_args_ = audit_args_ || layer.audit_args;
    default_deny_ = default_deny_ || layer.default_deny;
    if (layer.pinned()) pin_state_ = pin_state::unchecked;
    for (const auto& r : layer.rates) (void)r, rate_windows_.emplace_back();
    for (const auto& r : layer.rules) {
      compiled_rules::rule c{r, std::nullopt};
      if (r.match) {
        c.re.emplace();
        // Checked by make_gate_config; a failure here leaves a rule that refuses everything.
        if (::regcomp(&*c.re, r.match->c_str(), REG_EXTENDED | REG_NOSUB) != 0) {
          c.re.reset();
          c.spec.match.reset();
          c.spec.under = "/nonexistent-regex-failed";
        }
      }
      rules_->rules.push_back(std::move(c));
    }
  }
}

mcp_gate::~mcp_gate() = default;

mcp_decision mcp_gate::decision(bool from_client, const std::string& method, const json& msg) const {
  mcp_decision d;
  d.unix_ms = unix_ms();
  d.from_client = from_client;
  d.method = method;
  if (auto id = msg.find("id"); id != msg.end()) d.id = id->dump();
  return d;
}

void mcp_gate::record(mcp_decision d, gate_output& out) const {
  if (record_all_ || d.decision != "forward") out.decisions.push_back(std::move(d));
}

void mcp_gate::refuse(const json& msg, int code, const std::string& why, const std::string& rule, mcp_decision d,
                      gate_output& out) {
  d.decision = "refuse";
  d.rule = rule;
  d.error = why;
  auto id = msg.is_object() && msg.contains("id") ? msg["id"] : json(nullptr);
  // A notification gets no answer; it is only not forwarded.
  if (!msg.is_object() || msg.contains("id") || !msg.contains("method")) {
    json err = {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", "corral: " + why}}}};
    if (!rule.empty()) err["error"]["data"] = {{"rule", rule}};
    out.to_client.push_back(err.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  record(std::move(d), out);
}

std::string mcp_gate::filter_refusal(std::string_view kind, const std::string& name) const {
  for (const auto& layer : config_.layers) {
    const name_filter& f = kind == "tools" ? layer.tools : kind == "resources" ? layer.resources : layer.prompts;
    if (auto why = f.refusal(name, "mcp." + std::string(kind)); !why.empty()) return why;
  }
  return {};
}

void mcp_gate::from_client(std::string message, clock::time_point now, gate_output& out) {
  mcp_decision d;
  d.unix_ms = unix_ms();
  if (nested_deeper_than(message, kMaxDepth))
    return refuse(json(), kInvalidRequest, "the message nests deeper than " + std::to_string(kMaxDepth) + " levels", "",
                  std::move(d), out);
  auto msg = json::parse(message, nullptr, false);
  // What corral cannot read it does not pass on: the server might read it otherwise.
  if (msg.is_discarded()) return refuse(json(), kParseError, "the message is not JSON", "", std::move(d), out);
  if (msg.is_array())
    return refuse(json(), kInvalidRequest, "JSON-RPC batches do not pass corral's MCP gateway", "", std::move(d), out);
  if (!msg.is_object()) return refuse(json(), kInvalidRequest, "a message must be a JSON object", "", std::move(d), out);
  if (auto m = msg.find("method"); m != msg.end() && !m->is_string())
    return refuse(msg, kInvalidRequest, "a method must be a string", "", std::move(d), out);
  auto method = str_field(msg, "method");
  d = decision(true, method, msg);
  if (method.empty()) {  // a response to the server's request (sampling, roots, elicitation)
    out.to_server.push_back(wire(msg));
    return record(std::move(d), out);
  }
  if (!msg.contains("id") && method.rfind("notifications/", 0) != 0)
    // A request without an id would pass as a notification, past every rule; a lenient
    // server might still run it.
    return refuse(msg, kInvalidRequest, method + " needs an id", "", std::move(d), out);
  if (!msg.contains("id")) {  // a notification
    if (method == "notifications/cancelled") {
      // The server never saw a request corral answered: its cancellation goes nowhere.
      auto rid = params_of(msg).find("requestId");
      auto it = rid != params_of(msg).end() ? pending_.find(rid->dump()) : pending_.end();
      if (it == pending_.end() || it->second.own) {
        d.decision = "drop";
        d.rule = "cancels a request the server never got from the client";
        return record(std::move(d), out);
      }
      // Still in flight until answered: its id stays taken, and a late answer (which the
      // client would ignore) is dropped rather than matched to a later request.
      it->second.cancelled = true;
    } else if (default_deny_ && !kKnownClientMethods.count(method)) {
      return refuse(msg, kMethodNotFound, "notification " + method + " is not known to the gateway",
                    "mcp.default = deny", std::move(d), out);
    }
    out.to_server.push_back(wire(msg));
    record(std::move(d), out);
    if (method == "notifications/initialized" && pin_state_ == pin_state::unchecked) start_pin_check(now, out);
    return;
  }
  client_request(message, msg, now, out);
}

void mcp_gate::client_request(std::string& message, json& msg, clock::time_point now, gate_output& out) {
  auto method = str_field(msg, "method");
  auto d = decision(true, method, msg);
  const auto& id = msg["id"];
  if (!id.is_string() && !id.is_number_integer())
    return refuse(json(), kInvalidRequest, "a request id must be a string or an integer", "", std::move(d), out);
  auto key = id.dump();
  if (pending_.count(key) || (id.is_string() && id.get<std::string>().rfind(kOwnIdPrefix, 0) == 0))
    return refuse(msg, kInvalidRequest, "request id " + key + " is already in use", "", std::move(d), out);
  // A stateless client (2026-07-28: no initialize) says who it is in each request's _meta;
  // corral's own listings carry the latest, so such a server answers them too.
  if (auto meta = params_of(msg).find("_meta"); meta != params_of(msg).end() && meta->is_object()) client_meta_ = *meta;
  const bool tools_method = method.rfind("tools/", 0) == 0;
  if (tools_method && pin_state_ == pin_state::unchecked) start_pin_check(now, out);
  if (tools_method && pin_state_ == pin_state::checking) {
    std::size_t held_bytes = message.size();
    for (const auto& h : held_) held_bytes += h.size();
    if (held_.size() >= kMaxHeld || held_bytes > kMaxHeldBytes)
      return refuse(msg, kRefusedByPolicy, "too many requests wait for the pin check", "mcp.pin", std::move(d), out);
    held_.push_back(std::move(message));
    return;
  }
  if (pending_.size() >= kMaxPending)
    return refuse(msg, kRefusedByPolicy, "too many requests are waiting for the server's answers", "", std::move(d),
                  out);
  const auto& params = params_of(msg);
  if (method == "tools/call") {
    auto tool = str_field(params, "name");
    d.subject = tool;
    // Only for the audit file: a digest of a large argument costs more than the decision.
    if (auto args = params.find("arguments"); args != params.end() && record_all_) {
      d.args_sha256 = sha256_hex(args->dump(-1, ' ', false, json::error_handler_t::replace));
      if (audit_args_) d.args = *args;
    }
    if (tool.empty()) return refuse(msg, kInvalidParams, "tools/call needs params.name", "", std::move(d), out);
    if (auto rule = filter_refusal("tools", tool); !rule.empty())
      return refuse(msg, kInvalidParams, "unknown tool " + tool + " (hidden by corral)", rule, std::move(d), out);
    if (pin_state_ == pin_state::changed && !usable_.count(tool))
      return refuse(msg, kRefusedByPolicy, "the server's tool definitions changed since they were pinned: " +
                                               change_summary_, "mcp.pin", std::move(d), out);
    if (pin_state_ == pin_state::matched && !usable_.count(tool))
      return refuse(msg, kInvalidParams, "unknown tool " + tool + " (not among the pinned tools)", "mcp.pin",
                    std::move(d), out);
    if (auto why = call_refusal(params, tool, now); !why.empty()) {
      auto sep = why.find('\n');
      return refuse(msg, kRefusedByPolicy, why.substr(sep + 1), why.substr(0, sep), std::move(d), out);
    }
  } else if (method == "tools/list" && pin_state_ == pin_state::changed && usable_.empty()) {
    return refuse(msg, kRefusedByPolicy,
                  "the server's tool definitions changed since they were pinned: " + change_summary_, "mcp.pin",
                  std::move(d), out);
  } else if (method == "resources/read" || method == "resources/subscribe" || method == "resources/unsubscribe") {
    d.subject = str_field(params, "uri");
    if (auto rule = filter_refusal("resources", d.subject); !rule.empty())
      return refuse(msg, kInvalidParams, "resource " + d.subject + " is not available (hidden by corral)", rule,
                    std::move(d), out);
  } else if (method == "prompts/get") {
    d.subject = str_field(params, "name");
    if (auto rule = filter_refusal("prompts", d.subject); !rule.empty())
      return refuse(msg, kInvalidParams, "unknown prompt " + d.subject + " (hidden by corral)", rule, std::move(d),
                    out);
  } else if (method == "completion/complete") {
    auto ref = params.find("ref");
    if (ref != params.end() && ref->is_object()) {
      auto type = str_field(*ref, "type");
      bool prompt = type == "ref/prompt";
      d.subject = str_field(*ref, prompt ? "name" : "uri");
      if (auto rule = filter_refusal(prompt ? "prompts" : "resources", d.subject); !rule.empty())
        return refuse(msg, kInvalidParams, d.subject + " is hidden by corral", rule, std::move(d), out);
    }
  } else if (default_deny_ && !kKnownClientMethods.count(method)) {
    return refuse(msg, kMethodNotFound, "method " + method + " is not known to the gateway", "mcp.default = deny",
                  std::move(d), out);
  }
  pending_[key] = pending{method, d.subject, now, false};
  out.to_server.push_back(wire(msg));
  record(std::move(d), out);
}

// "rule\nwhy" when a call is refused by an argument rule, the budget or a rate; "" when it
// passes (and then it is counted).
std::string mcp_gate::call_refusal(const json& params, const std::string& tool, clock::time_point now) {
  static const json no_args = json::object();
  auto a = params.find("arguments");
  const json& args = a != params.end() && a->is_object() ? *a : no_args;
  for (const auto& r : rules_->rules) {
    const auto& spec = r.spec;
    if (!glob_match(spec.tool, tool)) continue;
    const json* v = &args;
    std::size_t i = 0;
    while (v && i <= spec.arg.size()) {
      auto j = spec.arg.find('.', i);
      if (j == std::string::npos) j = spec.arg.size();
      auto key = spec.arg.substr(i, j - i);
      auto it = v->is_object() ? v->find(key) : v->end();
      v = v->is_object() && it != v->end() ? &*it : nullptr;
      i = j + 1;
    }
    auto rule = "mcp.tools.rules " + spec.describe();
    if (!v) {
      if (spec.optional) continue;
      return rule + "\n" + tool + " needs the argument " + spec.arg + " (a rule checks it)";
    }
    std::vector<const json*> values;
    if (v->is_array())
      for (const auto& e : *v) values.push_back(&e);
    else
      values.push_back(v);
    for (const json* e : values) {
      bool pass = false;
      if (spec.min || spec.max) {
        pass = e->is_number();
        if (pass) {
          double n = e->get<double>();
          pass = (!spec.min || n >= *spec.min) && (!spec.max || n <= *spec.max);
        }
      } else if (e->is_string()) {
        const auto& s = e->get_ref<const std::string&>();
        if (spec.under) pass = lexically_under(s, *spec.under);
        else if (r.re) pass = s.find('\0') == std::string::npos && ::regexec(&*r.re, s.c_str(), 0, nullptr, 0) == 0;
      }
      if (!pass)
        return rule + "\n" + tool + "'s argument " + spec.arg + " = " +
               clip(e->dump(-1, ' ', false, json::error_handler_t::replace), 200) + " is refused";
    }
  }
  std::optional<std::uint64_t> budget;
  for (const auto& layer : config_.layers)
    if (layer.budget) budget = budget ? std::min(*budget, *layer.budget) : *layer.budget;
  if (budget && calls_ >= *budget)
    return "mcp.tools.budget " + std::to_string(*budget) + "\nthe session's budget of " + std::to_string(*budget) +
           " tool calls is spent";
  std::size_t w = 0;
  std::vector<std::deque<clock::time_point>*> counting;
  for (const auto& layer : config_.layers) {
    for (const auto& rate : layer.rates) {
      auto& window = rate_windows_[w++];
      if (!glob_match(rate.tool, tool)) continue;
      auto span = std::chrono::seconds(rate.per_seconds);
      while (!window.empty() && now - window.front() >= span) window.pop_front();
      if (window.size() >= rate.calls) {
        auto unit = rate.per_seconds == 1 ? "s" : rate.per_seconds == 60 ? "m" : "h";
        auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(span - (now - window.front())).count();
        return "mcp.tools.rate " + rate.tool + "=" + std::to_string(rate.calls) + "/" + unit + "\n" + tool +
               " is over its rate of " + std::to_string(rate.calls) + " calls per " +
               std::to_string(rate.per_seconds) + " s; retry in " + std::to_string(wait) + " ms";
      }
      counting.push_back(&window);
    }
  }
  for (auto* window : counting) window->push_back(now);
  ++calls_;
  return {};
}

void mcp_gate::from_server(std::string message, clock::time_point now, gate_output& out) {
  mcp_decision d;
  d.unix_ms = unix_ms();
  d.from_client = false;
  const bool deep = nested_deeper_than(message, kMaxDepth);
  auto msg = deep ? json(json::value_t::discarded) : json::parse(message, nullptr, false);
  if (msg.is_discarded() || !msg.is_object()) {
    d.decision = "drop";
    d.error = deep ? "the server's message nests deeper than " + std::to_string(kMaxDepth) + " levels"
                   : msg.is_discarded() ? "the server's message is not JSON" : "the server's message is not a JSON object";
    out.warnings.push_back("corral mcp: a server message was not forwarded: " + d.error);
    return record(std::move(d), out);
  }
  auto method = str_field(msg, "method");
  if (method.empty()) {  // a response
    auto id = msg.find("id");
    auto it = id != msg.end() ? pending_.find(id->dump()) : pending_.end();
    if (it == pending_.end()) {
      // Every request that reached the server is in flight here, so an answer to anything
      // else answers nothing: dropped. Passed on, an answer with id "1" to request 1 would
      // escape the listing's filter, and a client that compares ids loosely (the TypeScript
      // SDK takes Number(id)) would take it.
      d = decision(false, "", msg);
      d.decision = "drop";
      d.error = "the server answered id " + (id != msg.end() ? id->dump() : std::string("(none)")) +
                ", which no request in flight has";
      out.warnings.push_back("corral mcp: a server message was not forwarded: " + d.error);
      return record(std::move(d), out);
    }
    auto p = std::move(it->second);
    pending_.erase(it);
    if (p.cancelled) {
      d = decision(false, p.method, msg);
      d.decision = "drop";
      d.rule = "answers a request the client cancelled";
      return record(std::move(d), out);
    }
    return server_response(message, msg, std::move(p), now, out);
  }
  d = decision(false, method, msg);
  if (msg.contains("id")) {  // the server's own request (sampling, roots, elicitation, ping)
    if (default_deny_ && !kKnownServerMethods.count(method)) {
      d.decision = "refuse";
      d.rule = "mcp.default = deny";
      json err = {{"jsonrpc", "2.0"}, {"id", msg["id"]},
                  {"error", {{"code", kMethodNotFound}, {"message", "corral: method " + method + " is not known to the gateway"}}}};
      out.to_server.push_back(err.dump());
      return record(std::move(d), out);
    }
  } else if (method == "notifications/resources/updated") {
    d.subject = str_field(params_of(msg), "uri");
    if (auto rule = filter_refusal("resources", d.subject); !rule.empty()) {
      d.decision = "drop";
      d.rule = rule;
      return record(std::move(d), out);
    }
  } else if (default_deny_ && !kKnownServerMethods.count(method)) {
    d.decision = "drop";
    d.rule = "mcp.default = deny";
    return record(std::move(d), out);
  }
  out.to_client.push_back(wire(msg));
  record(std::move(d), out);
  if (method == "notifications/tools/list_changed" && pin_state_ != pin_state::none &&
      pin_state_ != pin_state::checking)
    start_pin_check(now, out);
}

void mcp_gate::server_response(std::string& message, json& msg, pending p, clock::time_point now, gate_output& out) {
  if (p.own) return pin_page(msg, now, out);
  auto d = decision(false, p.method, msg);
  d.subject = p.subject;
  d.latency_us = std::chrono::duration_cast<std::chrono::microseconds>(now - p.since).count();
  d.result_bytes = message.size();
  if (auto err = msg.find("error"); err != msg.end())
    d.error = err->is_object() ? str_field(*err, "message") : err->dump();
  else if (auto res = msg.find("result"); res != msg.end() && res->is_object()) {
    auto is_error = res->find("isError");
    if (is_error != res->end() && is_error->is_boolean() && is_error->get<bool>()) d.error = "the tool reported an error";
  }
  bool rewritten = false;
  if (msg.contains("result") && msg["result"].is_object()) {
    if (p.method == "tools/list") rewritten = filter_listing(msg, "tools", "name", "tools", out, d);
    else if (p.method == "resources/list") rewritten = filter_listing(msg, "resources", "uri", "resources", out, d);
    else if (p.method == "resources/templates/list")
      rewritten = filter_listing(msg, "resourceTemplates", "uriTemplate", "resources", out, d);
    else if (p.method == "prompts/list") rewritten = filter_listing(msg, "prompts", "name", "prompts", out, d);
  }
  if (d.decision == "refuse") return;  // filter_listing answered the client itself
  d.decision = rewritten ? "filter" : "forward";
  out.to_client.push_back(wire(msg));
  record(std::move(d), out);
}

// Takes the hidden entries out of a listing; true when any was. With a pin, every tool is
// also compared with the definition last checked against it, whatever the state: a listing
// can differ from corral's own (answered while a check ran, a name given twice, a change
// without notifications/tools/list_changed) and must not carry what the check did not see.
bool mcp_gate::filter_listing(json& msg, const char* array, const char* key, std::string_view kind,
                              gate_output& out, mcp_decision& d) {
  auto& items = msg["result"][array];
  if (!items.is_array()) return false;
  const bool pinned = kind == "tools" && pin_state_ != pin_state::none;
  std::vector<std::string> hidden, differing;
  json kept = json::array();
  for (auto& item : items) {
    auto name = str_field(item, key);
    bool visible = filter_refusal(kind, name).empty();
    if (visible && pinned) {
      auto it = verified_.find(name);
      if (it == verified_.end() || it->second != canonical_tool(item)) {
        differing.push_back(name);
        visible = false;
      } else if (!usable_.count(name)) {
        visible = false;
      }
    }
    if (visible) kept.push_back(std::move(item));
    else hidden.push_back(name);
  }
  if (!differing.empty()) {
    auto names = join_list(differing);
    out.warnings.push_back("corral mcp: the server listed tools other than those checked against the pin (hidden): " +
                           names);
    if (pin_state_ == pin_state::matched) {  // changed without saying so
      change_summary_ = "changed without notifications/tools/list_changed: " + names;
      pin_state_ = pin_state::changed;
      for (auto& n : differing) usable_.erase(n);
      if (refuse_on_change()) usable_.clear();
    }
    if (pin_state_ == pin_state::changed && usable_.empty()) {
      refuse(msg, kRefusedByPolicy, "the server's tool definitions changed since they were pinned: " + change_summary_,
             "mcp.pin", d, out);
      d.decision = "refuse";
      return false;
    }
  }
  items = std::move(kept);
  if (hidden.empty()) return false;
  d.rule = "hidden: " + join_list(hidden);
  return true;
}

bool mcp_gate::refuse_on_change() const {
  for (const auto& layer : config_.layers)
    if (layer.pinned() && layer.on_pin_change == pin_action::refuse) return true;
  return false;
}

void mcp_gate::start_pin_check(clock::time_point now, gate_output& out) {
  pin_state_ = pin_state::checking;
  fetched_.clear();
  own_pages_ = 0;
  ask_tools("", now, out);
}

void mcp_gate::ask_tools(const std::string& cursor, clock::time_point now, gate_output& out) {
  auto id = kOwnIdPrefix + std::to_string(++own_ids_);
  json req = {{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/list"}, {"params", json::object()}};
  if (!cursor.empty()) req["params"]["cursor"] = cursor;
  if (!client_meta_.is_null()) req["params"]["_meta"] = client_meta_;
  pending_[json(id).dump()] = pending{"tools/list", "", now, true};
  out.to_server.push_back(req.dump());
  ++own_pages_;
}

void mcp_gate::pin_page(const json& msg, clock::time_point now, gate_output& out) {
  if (msg.contains("error"))
    return pin_verdict("the server did not list its tools: " + clip(wire(msg["error"]), 300), now, out);
  auto res = msg.find("result");
  if (res == msg.end() || !res->is_object() || !res->contains("tools"))
    return pin_verdict("the server's tools/list answer has no tools", now, out);
  add_tools((*res)["tools"], fetched_);
  auto next = str_field(*res, "nextCursor");
  if (!next.empty()) {
    if (own_pages_ >= kMaxPinPages) return pin_verdict("the server's tool listing does not end", now, out);
    return ask_tools(next, now, out);
  }
  pin_verdict("", now, out);
}

void mcp_gate::pin_verdict(const std::string& failed, clock::time_point now, gate_output& out) {
  std::vector<std::string> problems;
  if (!failed.empty()) problems.push_back(failed);
  std::set<std::string> usable;
  for (const auto& [name, def] : fetched_) usable.insert(name);
  bool refuse_all = !failed.empty();
  for (std::size_t i = 0; failed.empty() && i < config_.layers.size(); ++i) {
    const auto& layer = config_.layers[i];
    if (!layer.pinned()) continue;
    std::string problem;
    if (config_.pin_files[i]) {
      auto changes = diff_tools(*config_.pin_files[i], fetched_);
      if (!changes.empty()) {
        problem = changes.summary();
        for (auto& name : changes.added) usable.erase(name);
        for (auto& c : changes.changed) usable.erase(c.substr(0, c.find(' ')));
      }
    }
    if (!layer.pin.empty()) {
      auto now_pin = pin_digest(fetched_);
      if (now_pin != layer.pin) {
        if (problem.empty()) problem = "pinned " + layer.pin + ", the server's tools now give " + now_pin;
        if (!config_.pin_files[i]) usable.clear();  // a digest alone cannot say which tool changed
      }
    }
    if (!problem.empty()) {
      problems.push_back(problem);
      if (layer.on_pin_change == pin_action::refuse) refuse_all = true;
    }
  }
  verified_ = fetched_;
  fetched_.clear();
  mcp_decision d;
  d.unix_ms = unix_ms();
  d.from_client = false;
  d.method = "tools/list";
  d.subject = pin_digest(verified_);
  if (problems.empty()) {
    pin_state_ = pin_state::matched;
    usable_ = std::move(usable);
    change_summary_.clear();
    d.decision = "pin_match";
    if (record_all_) out.decisions.push_back(std::move(d));
  } else {
    pin_state_ = pin_state::changed;
    change_summary_.clear();
    for (auto& p : problems) change_summary_ += (change_summary_.empty() ? "" : "; ") + p;
    usable_ = refuse_all ? std::set<std::string>{} : std::move(usable);
    d.decision = "pin_changed";
    d.rule = "mcp.pin";
    d.error = change_summary_;
    out.warnings.push_back(std::string("corral mcp: the server's tool definitions differ from the pin (") +
                           (refuse_all ? "all its tools refused" : "the changed tools hidden") +
                           "): " + change_summary_);
    out.decisions.push_back(std::move(d));
  }
  // What waited goes now, in its order; a check started again by it holds the rest.
  auto held = std::move(held_);
  held_.clear();
  while (!held.empty()) {
    auto m = std::move(held.front());
    held.pop_front();
    if (pin_state_ == pin_state::checking) {
      held_.push_back(std::move(m));
      continue;
    }
    from_client(std::move(m), now, out);
  }
}

} // namespace corral
