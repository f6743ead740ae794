// The value of one member of a call's params, checked: exec's and session.open's decoders
// (exec_params.hpp, session_params.hpp) read their shared kinds of value here, so a
// member means the same and is refused with the same words in both. A failure is an
// invalid_request naming the member and what it must be.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/failure.hpp"

namespace corral {

// "\"name\" must be what".
failure bad_param(const std::string& name, const std::string& what);

expected<std::string> string_param(const nlohmann::json& v, const std::string& name);
// argv, network_allow.
expected<std::vector<std::string>> string_array_param(const nlohmann::json& v, const std::string& name);
// env: an object of strings, a bad value named as "env.NAME".
expected<std::map<std::string, std::string>> string_object_param(const nlohmann::json& v, const std::string& name);
// An integer from 1 to `max`.
expected<std::uint64_t> positive_param(const nlohmann::json& v, const std::string& name,
                                       std::uint64_t max = UINT64_MAX);
// A positive, finite number (cpu cores).
expected<double> positive_number_param(const nlohmann::json& v, const std::string& name);
// Positive seconds, at most 1e7, rounded up to the millisecond.
expected<std::chrono::milliseconds> seconds_param(const nlohmann::json& v, const std::string& name);
expected<bool> bool_param(const nlohmann::json& v, const std::string& name);
// A workspace's id or name: a string, not empty (exec, session.open, workspace.*).
expected<std::string> workspace_param(const nlohmann::json& v, const std::string& name);

// A value read above into its field (`read_into(string_param(v, key), r.tier)`); its
// failure is the call's.
template <class Value, class Field>
status read_into(Value&& value, Field& field) {
  if (!value) return value.error();
  field = std::move(*value);
  return ok();
}

} // namespace corral
