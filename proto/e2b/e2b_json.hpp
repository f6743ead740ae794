// The E2B wire's JSON, pure (no actors): the control plane's sandbox objects and errors,
// envd's EntryInfo, process events and Connect errors. Field names as the E2B SDKs read
// them (proto3 JSON: lowerCamelCase, enums as strings, int64 as strings, bytes base64).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "actors/workspaces/workspace_messages.hpp"
#include "config/base64.hpp"
#include "config/failure.hpp"
#include "proto/e2b/sandbox_record.hpp"
#include "proto/http/http_message.hpp"

namespace corral {

// The envd version corral answers as: the features the SDKs gate on it (default user,
// stdin and CloseStdin, octet-stream uploads) are the ones the gateway implements; file
// metadata (0.6.2) and watch includeEntry (0.6.3) are not, so it says no more.
inline constexpr const char* kEnvdVersion = "0.5.7";
// Where the SDK's default user keeps its files; the sandbox's workspace appears there.
inline constexpr const char* kSandboxHome = "/home/user";


// "2026-12-06T10:00:00.000Z"
std::string rfc3339_ms(std::int64_t unix_ms);

// Control plane: {"code": status, "message": …}.
http_response control_error(int status, const std::string& message);
http_response json_response(int status, const nlohmann::json& body);
http_response no_content();

// The status a failure of the runtime's maps to on the control plane.
int control_status(failure_kind kind);
// Connect's error codes ("not_found", "invalid_argument", …) for a runtime failure.
const char* connect_code(failure_kind kind);
// A unary Connect error: the HTTP status Connect gives the code, {"code", "message"}.
http_response connect_error(const std::string& code, const std::string& message);
// The end of a stream: {} or {"error": {"code", "message"}}.
std::string stream_end(const std::string& code = "", const std::string& message = "");

// The sandbox as create, connect and getInfo answer it (SandboxDetail's fields).
nlohmann::json sandbox_json(const sandbox_record& r, const workspace_info& w, bool with_token);

// A path as the sandbox sees it, from the workspace's relative one ("." is the home).
std::string sandbox_path(const std::string& relative);
// A path the SDK sent (absolute, or relative to the home) as the workspace's files API takes
// it; nullopt when it lies outside the sandbox's files (only /home/user and /work hold them).
std::optional<std::string> workspace_relative(const std::string& path);
// EntryInfo.
nlohmann::json entry_json(const tree_entry& e);

} // namespace corral
