// The JSON form of an execution result, shared by `corral run --json` and the daemon.
// Output is bytes: valid UTF-8 goes out as a string; anything else additionally as
// base64 (`stdout_base64`), so no byte is lost and the JSON stays valid.
#pragma once

#include "config/base64.hpp"

#include <nlohmann/json.hpp>

#include "actors/exec_result.hpp"
#include "config/failure.hpp"
#include "config/utf8.hpp"  // is_valid_utf8, to_valid_utf8

namespace corral {

nlohmann::json to_json(const exec_result& result);
nlohmann::json to_json(const network_event& event);  // one egress audit record
// The `network` array and `network_dropped` count of a result or a session's end.
void add_network_audit(nlohmann::json& into, const network_audit& audit);
nlohmann::json to_json(const failure& error);


// j[name] = the bytes as a string; when they are not valid UTF-8, what can be shown there
// and every byte in j[name + "_base64"]. Results, exec.output and session notifications.
void put_bytes(nlohmann::json& j, const std::string& name, const std::string& bytes);

} // namespace corral
