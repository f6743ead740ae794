#include "proto/jsonrpc/exec_params.hpp"

#include <cmath>

#include "proto/jsonrpc/param_values.hpp"
#include "proto/jsonrpc/result_json.hpp"

namespace corral {

using nlohmann::json;

expected<exec_params> exec_params_from_json(const json& params) {
  exec_params p;
  auto& r = p.request;
  bool language_given = false;
  for (auto& [key, v] : params.items()) {
    status read = ok();
    if (key == "argv") read = read_into(string_array_param(v, key), r.argv);
    else if (key == "language") {
      read = read_into(string_param(v, key), r.language);
      language_given = true;
    } else if (key == "code") read = read_into(string_param(v, key), r.code);
    else if (key == "stdin") read = read_into(string_param(v, key), r.stdin_data);
    else if (key == "stdin_base64") {
      auto s = string_param(v, key);
      if (!s) return s.error();
      auto bytes = base64_decode(*s);
      if (!bytes) return bad_param(key, "standard base64 with padding");
      r.stdin_data = *bytes;
    } else if (key == "timeout") read = read_into(seconds_param(v, key), r.timeout);
    else if (key == "memory_limit") read = read_into(positive_param(v, key), r.memory_limit_bytes);
    else if (key == "output_cap") read = read_into(positive_param(v, key), r.output_cap);
    else if (key == "pids_limit") read = read_into(positive_param(v, key), r.pids_limit);
    else if (key == "cpu_cores") read = read_into(positive_number_param(v, key), r.cpu_cores);
    else if (key == "env") read = read_into(string_object_param(v, key), r.env);
    else if (key == "tier") read = read_into(string_param(v, key), r.tier);
    // Narrows the daemon profile's allow-list (config/tighten_network.hpp).
    else if (key == "network_allow") read = read_into(string_array_param(v, key), r.network_allow);
    else if (key == "stream") read = read_into(bool_param(v, key), p.stream);
    // Runs in the caller's workspace (workspace.create), its files at /work.
    else if (key == "workspace") read = read_into(workspace_param(v, key), r.workspace);
    else if (key == "changes") read = read_into(bool_param(v, key), r.changes);
    else if (key == "leave_running") read = read_into(bool_param(v, key), r.leave_running);
    else if (key == "cwd") read = read_into(string_param(v, key), r.cwd);
    else return make_failure(failure_kind::invalid_request, "unknown parameter \"" + key + "\" for exec");
    if (!read) return read.error();
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
  if (!r.workspace.empty()) j["workspace"] = r.workspace;
  if (r.changes) j["changes"] = true;
  if (r.leave_running) j["leave_running"] = true;
  if (!r.cwd.empty()) j["cwd"] = r.cwd;
  return j;
}

} // namespace corral
