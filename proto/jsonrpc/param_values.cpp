#include "proto/jsonrpc/param_values.hpp"

#include <cmath>

namespace corral {

using nlohmann::json;

failure bad_param(const std::string& name, const std::string& what) {
  return make_failure(failure_kind::invalid_request, "\"" + name + "\" must be " + what);
}

expected<std::string> string_param(const json& v, const std::string& name) {
  if (!v.is_string()) return bad_param(name, "a string");
  return v.get<std::string>();
}

expected<std::vector<std::string>> string_array_param(const json& v, const std::string& name) {
  if (!v.is_array()) return bad_param(name, "an array of strings");
  std::vector<std::string> out;
  for (auto& a : v) {
    if (!a.is_string()) return bad_param(name, "an array of strings");
    out.push_back(a.get<std::string>());
  }
  return out;
}

expected<std::map<std::string, std::string>> string_object_param(const json& v, const std::string& name) {
  if (!v.is_object()) return bad_param(name, "an object of strings");
  std::map<std::string, std::string> out;
  for (auto& [key, value] : v.items()) {
    if (!value.is_string()) return bad_param(name + "." + key, "a string");
    out[key] = value.get<std::string>();
  }
  return out;
}

expected<std::uint64_t> positive_param(const json& v, const std::string& name, std::uint64_t max) {
  if ((v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() > 0)) && v.get<std::uint64_t>() > 0 &&
      v.get<std::uint64_t>() <= max)
    return v.get<std::uint64_t>();
  return bad_param(name, max == UINT64_MAX ? "a positive integer" : "an integer from 1 to " + std::to_string(max));
}

expected<double> positive_number_param(const json& v, const std::string& name) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
    return bad_param(name, "a positive number");
  return v.get<double>();
}

expected<std::chrono::milliseconds> seconds_param(const json& v, const std::string& name) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0 || v.get<double>() > 1e7)
    return bad_param(name, "a positive number of seconds");
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(v.get<double>() * 1000)));
}

expected<std::string> workspace_param(const json& v, const std::string& name) {
  if (!v.is_string() || v.get<std::string>().empty()) return bad_param(name, "a workspace's id or name (a string, not empty)");
  return v.get<std::string>();
}

expected<bool> bool_param(const json& v, const std::string& name) {
  if (!v.is_boolean()) return bad_param(name, "true or false");
  return v.get<bool>();
}

} // namespace corral
