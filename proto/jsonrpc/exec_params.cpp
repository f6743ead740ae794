#include "proto/jsonrpc/exec_params.hpp"

#include <cmath>

#include "proto/jsonrpc/result_json.hpp"

namespace corral {

namespace {

using nlohmann::json;

failure bad(const std::string& name, const std::string& what) {
  return make_failure(failure_kind::invalid_request, "\"" + name + "\" must be " + what);
}

expected<std::uint64_t> positive_integer(const json& v, const std::string& name) {
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > 0) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() > 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());
  return bad(name, "a positive integer");
}

expected<std::string> string_member(const json& v, const std::string& name) {
  if (!v.is_string()) return bad(name, "a string");
  return v.get<std::string>();
}

} // namespace

expected<std::string> base64_decode(const std::string& text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) return make_failure(failure_kind::invalid_request, "base64 length is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad > 0 || (v[k] = value(c)) < 0) {
        return make_failure(failure_kind::invalid_request, "invalid base64");
      }
    }
    std::uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>((n >> 16) & 0xFF);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(n & 0xFF);
  }
  return out;
}

expected<exec_params> exec_params_from_json(const json& params) {
  exec_params p;
  auto& r = p.request;
  bool language_given = false;
  for (auto& [key, v] : params.items()) {
    if (key == "argv") {
      if (!v.is_array()) return bad(key, "an array of strings");
      for (auto& a : v) {
        if (!a.is_string()) return bad(key, "an array of strings");
        r.argv.push_back(a.get<std::string>());
      }
    } else if (key == "language") {
      auto s = string_member(v, key);
      if (!s) return s.error();
      r.language = *s;
      language_given = true;
    } else if (key == "code") {
      auto s = string_member(v, key);
      if (!s) return s.error();
      r.code = *s;
    } else if (key == "stdin") {
      auto s = string_member(v, key);
      if (!s) return s.error();
      r.stdin_data = *s;
    } else if (key == "stdin_base64") {
      auto s = string_member(v, key);
      if (!s) return s.error();
      auto bytes = base64_decode(*s);
      if (!bytes) return bad(key, "standard base64 with padding");
      r.stdin_data = *bytes;
    } else if (key == "timeout") {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0 || v.get<double>() > 1e7)
        return bad(key, "a positive number of seconds");
      r.timeout = std::chrono::milliseconds(static_cast<long long>(std::ceil(v.get<double>() * 1000)));
    } else if (key == "memory_limit") {
      auto n = positive_integer(v, key);
      if (!n) return n.error();
      r.memory_limit_bytes = *n;
    } else if (key == "output_cap") {
      auto n = positive_integer(v, key);
      if (!n) return n.error();
      r.output_cap = *n;
    } else if (key == "pids_limit") {
      auto n = positive_integer(v, key);
      if (!n) return n.error();
      r.pids_limit = *n;
    } else if (key == "cpu_cores") {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
        return bad(key, "a positive number");
      r.cpu_cores = v.get<double>();
    } else if (key == "env") {
      if (!v.is_object()) return bad(key, "an object of strings");
      for (auto& [name, value] : v.items()) {
        if (!value.is_string()) return bad("env." + name, "a string");
        r.env[name] = value.get<std::string>();
      }
    } else if (key == "tier") {
      auto s = string_member(v, key);
      if (!s) return s.error();
      r.tier = *s;
    } else if (key == "network_allow") {
      // Narrows the daemon profile's allow-list (config/tighten_network.hpp).
      if (!v.is_array()) return bad(key, "an array of strings");
      std::vector<std::string> entries;
      for (auto& a : v) {
        if (!a.is_string()) return bad(key, "an array of strings");
        entries.push_back(a.get<std::string>());
      }
      r.network_allow = std::move(entries);
    } else if (key == "stream") {
      if (!v.is_boolean()) return bad(key, "true or false");
      p.stream = v.get<bool>();
    } else {
      return make_failure(failure_kind::invalid_request, "unknown parameter \"" + key + "\" for exec");
    }
  }
  if (!language_given) r.language = r.code.empty() ? "argv" : "command";
  if (params.contains("stdin") && params.contains("stdin_base64"))
    return make_failure(failure_kind::invalid_request, "give \"stdin\" or \"stdin_base64\", not both");
  return p;
}

json exec_params_to_json(const exec_request& r, bool stream) {
  json j{{"language", r.language}, {"stream", stream}};
  if (!r.argv.empty()) j["argv"] = r.argv;
  if (!r.code.empty()) j["code"] = r.code;
  if (r.stdin_data) {
    if (is_valid_utf8(*r.stdin_data)) j["stdin"] = *r.stdin_data;
    else j["stdin_base64"] = base64_encode(*r.stdin_data);
  }
  if (r.timeout) j["timeout"] = r.timeout->count() / 1000.0;
  if (r.memory_limit_bytes) j["memory_limit"] = *r.memory_limit_bytes;
  if (r.output_cap) j["output_cap"] = *r.output_cap;
  if (r.pids_limit) j["pids_limit"] = *r.pids_limit;
  if (r.cpu_cores) j["cpu_cores"] = *r.cpu_cores;
  if (!r.env.empty()) j["env"] = r.env;
  if (!r.tier.empty()) j["tier"] = r.tier;
  if (r.network_allow) j["network_allow"] = *r.network_allow;
  return j;
}

} // namespace corral
