// JSON-RPC 2.0, newline-delimited: one request, response or notification per line. Pure
// functions and a line splitter, testable without sockets; proto/PROTOCOL.md is the schema.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/failure.hpp"
#include "config/line_splitter.hpp"

namespace corral::rpc {

// The standard codes, then corral's own in the server range. A failure_kind maps to
// exactly one code (failure_kind::invalid_request is "invalid params"; internal is the
// standard internal error), so a client can branch on the code alone.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kRefused = -32001;
inline constexpr int kTierUnavailable = -32002;
inline constexpr int kLimitExceeded = -32003;
inline constexpr int kTimeout = -32004;
inline constexpr int kConfigError = -32005;
inline constexpr int kSpawnFailed = -32006;
// No such workspace, mark or file for this caller (another principal's workspace answers
// the same as an absent one).
inline constexpr int kNotFound = -32012;
// The thing named is in a state that forbids the call now: a workspace being snapshotted
// or restored, a snapshot being restored from; the same call later may succeed.
inline constexpr int kConflict = -32011;
// The daemon is stopping (SIGTERM/SIGINT): a call in flight is answered with this, its
// execution terminated with its grace. Not a failure_kind: the request itself was fine.
inline constexpr int kStopping = -32010;

int code_for(failure_kind kind);
// The kind a code stands for (kTimeout and the framing codes have none of their own:
// they come back as internal and invalid_request).
failure_kind kind_for(int code);

struct request {
  nlohmann::json id;  // string, integer or null; absent for a notification
  bool notification = false;
  std::string method;
  nlohmann::json params = nlohmann::json::object();  // always an object once parsed
};

struct error {
  int code = kInternalError;
  std::string message;
  nlohmann::json id = nullptr;  // the request's id when it could be read, else null
  nlohmann::json data = nullptr;
};

error error_from(const failure& f, const nlohmann::json& id);

// One line (without its newline) to a request, or the error to send back. Batches are
// refused (kInvalidRequest): nothing corral offers gains from them.
std::variant<request, error> parse_request(std::string_view line);

// Serialisers; each returns one line ending in '\n'. Strings in `result`/`params` must be
// valid UTF-8 (nlohmann::json refuses to dump anything else).
std::string response_line(const nlohmann::json& id, const nlohmann::json& result);
std::string error_line(const error& e);
std::string notification_line(const std::string& method, const nlohmann::json& params);
std::string request_line(const nlohmann::json& id, const std::string& method, const nlohmann::json& params);

// Incoming bytes to lines (config/line_splitter.hpp); a client's "\r\n" counts as "\n".
class line_splitter : public corral::line_splitter {
public:
  explicit line_splitter(std::size_t max_line) : corral::line_splitter(max_line, carriage_return::strip) {}
};

} // namespace corral::rpc
