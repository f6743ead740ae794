#include "proto/jsonrpc/jsonrpc.hpp"

#include <set>
#include <vector>

namespace corral::rpc {

namespace {

using nlohmann::json;

// nlohmann's parser recurses once per nesting level: a line of a million '[' would
// overflow the stack before the parser could refuse it, so depth is measured first.
constexpr int kMaxDepth = 64;

bool nesting_within_limit(std::string_view s) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

bool valid_id(const json& id) {
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned() || id.is_null();
}

} // namespace

int code_for(failure_kind kind) {
  switch (kind) {
    case failure_kind::invalid_request: return kInvalidParams;
    case failure_kind::refused: return kRefused;
    case failure_kind::tier_unavailable: return kTierUnavailable;
    case failure_kind::limit_exceeded: return kLimitExceeded;
    case failure_kind::config_error: return kConfigError;
    case failure_kind::spawn_failed: return kSpawnFailed;
    case failure_kind::not_found: return kNotFound;
    case failure_kind::conflict: return kConflict;
    case failure_kind::internal: return kInternalError;
  }
  return kInternalError;
}

failure_kind kind_for(int code) {
  switch (code) {
    case kParseError:
    case kInvalidRequest:
    case kMethodNotFound:
    case kInvalidParams: return failure_kind::invalid_request;
    case kRefused: return failure_kind::refused;
    case kTierUnavailable: return failure_kind::tier_unavailable;
    case kLimitExceeded: return failure_kind::limit_exceeded;
    case kConfigError: return failure_kind::config_error;
    case kSpawnFailed: return failure_kind::spawn_failed;
    case kNotFound: return failure_kind::not_found;
    case kConflict: return failure_kind::conflict;
    default: return failure_kind::internal;
  }
}

error error_from(const failure& f, const json& id) {
  return error{code_for(f.kind), f.message, id, json{{"kind", to_string(f.kind)}}};
}

std::variant<request, error> parse_request(std::string_view line) {
  if (!nesting_within_limit(line))
    return error{kParseError, "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels", nullptr, nullptr};
  // No exceptions: a malformed line is an answer, not a control-flow event. The parser
  // also refuses strings that are not valid UTF-8, so whatever it accepts dumps again.
  // A key given twice would silently keep the last value ("argv" twice runs the second):
  // the parser's callback sees every key of every object, so a repeat refuses the line.
  std::vector<std::set<std::string>> open_objects;
  std::string repeated;
  auto watch_keys = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open_objects.emplace_back();
    else if (event == json::parse_event_t::object_end && !open_objects.empty()) open_objects.pop_back();
    else if (event == json::parse_event_t::key && !open_objects.empty() &&
             !open_objects.back().insert(parsed.get<std::string>()).second && repeated.empty())
      repeated = parsed.get<std::string>();
    return true;
  };
  json j = json::parse(line.begin(), line.end(), watch_keys, false);
  if (j.is_discarded()) return error{kParseError, "the line is not valid JSON", nullptr, nullptr};
  if (!repeated.empty())
    return error{kInvalidRequest, "the key \"" + repeated + "\" appears twice in one object", nullptr, nullptr};
  if (j.is_array()) return error{kInvalidRequest, "batches are not supported: send one request per line", nullptr, nullptr};
  if (!j.is_object()) return error{kInvalidRequest, "a request must be a JSON object", nullptr, nullptr};

  request r;
  auto id = j.find("id");
  if (id != j.end()) {
    if (!valid_id(*id)) return error{kInvalidRequest, "id must be a string, an integer or null", nullptr, nullptr};
    r.id = *id;
  } else {
    r.notification = true;
  }
  auto version = j.find("jsonrpc");
  if (version == j.end() || !version->is_string() || *version != "2.0")
    return error{kInvalidRequest, "\"jsonrpc\" must be \"2.0\"", r.id, nullptr};
  auto method = j.find("method");
  if (method == j.end() || !method->is_string())
    return error{kInvalidRequest, "\"method\" must be a string", r.id, nullptr};
  r.method = method->get<std::string>();
  auto params = j.find("params");
  if (params != j.end()) {
    if (params->is_array())
      return error{kInvalidParams, "params must be an object (corral takes named parameters only)", r.id, nullptr};
    if (!params->is_object()) return error{kInvalidRequest, "params must be an object", r.id, nullptr};
    r.params = std::move(*params);
  }
  return r;
}

std::string response_line(const json& id, const json& result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}.dump() + "\n";
}

std::string error_line(const error& e) {
  json err{{"code", e.code}, {"message", e.message}};
  if (!e.data.is_null()) err["data"] = e.data;
  return json{{"jsonrpc", "2.0"}, {"id", e.id}, {"error", std::move(err)}}.dump() + "\n";
}

std::string notification_line(const std::string& method, const json& params) {
  return json{{"jsonrpc", "2.0"}, {"method", method}, {"params", params}}.dump() + "\n";
}

std::string request_line(const json& id, const std::string& method, const json& params) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump() + "\n";
}

} // namespace corral::rpc
