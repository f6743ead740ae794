#include "proto/jsonrpc/result_json.hpp"

#include "proto/jsonrpc/workspace_json.hpp"
#include "config/version.hpp"

namespace corral {

void put_bytes(nlohmann::json& j, const std::string& name, const std::string& bytes) {
  if (is_valid_utf8(bytes)) {
    j[name] = bytes;
  } else {
    // The string keeps what can be shown; the base64 form keeps every byte.
    j[name] = to_valid_utf8(bytes);
    j[name + "_base64"] = base64_encode(bytes);
  }
}

namespace {

void put_stream(nlohmann::json& j, const std::string& name, const captured_stream& s) {
  put_bytes(j, name, s.data);
  j[name + "_truncated"] = s.truncated;
  j[name + "_dropped_bytes"] = s.dropped_bytes;
}

} // namespace

nlohmann::json to_json(const exec_result& r) {
  nlohmann::json j;
  j["execution_id"] = r.execution_id;
  j["verdict"] = to_string(r.how);
  j["exit_code"] = r.exit_code ? nlohmann::json(*r.exit_code) : nlohmann::json(nullptr);
  j["signal"] = r.term_signal ? nlohmann::json(*r.term_signal) : nlohmann::json(nullptr);
  put_stream(j, "stdout", r.out);
  put_stream(j, "stderr", r.err);
  j["duration_ms"] = r.duration.count() / 1000.0;
  j["timed_out"] = r.timed_out;
  j["tier"] = r.tier;
  j["corral_version"] = corral_version();
  if (!r.workspace.empty()) j["workspace"] = r.workspace;
  if (r.changes) {
    auto changes = nlohmann::json::array();
    for (auto& c : r.changes->entries) changes.push_back(to_json(c, kWorkspaceMountAt));
    j["changes"] = std::move(changes);
    j["changes_truncated"] = r.changes->truncated;
    if (!r.changes->error.empty()) j["changes_error"] = r.changes->error;
  }
  j["isolation"] = r.isolation;
  j["not_enforced"] = r.not_enforced;
  j["masked"] = r.masked;
  auto& steps = j["setup_steps_us"] = nlohmann::json::array();
  for (auto& step : r.steps) steps.push_back({{"step", step.name}, {"us", step.micros}});
  j["usage"] = {{"peak_memory_bytes", r.usage.peak_memory_bytes},
                {"cpu_user_us", r.usage.cpu_user_us},
                {"cpu_system_us", r.usage.cpu_system_us}};
  if (r.network) add_network_audit(j, *r.network);
  return j;
}

void add_network_audit(nlohmann::json& into, const network_audit& audit) {
  auto& events = into["network"] = nlohmann::json::array();
  for (auto& e : audit.events) events.push_back(to_json(e));
  into["network_dropped"] = audit.dropped;
}

nlohmann::json to_json(const network_event& e) {
  return {{"host", to_valid_utf8(e.host)}, {"port", e.port}, {"protocol", e.protocol},
          {"addresses", e.addresses},       {"decision", e.decision}, {"rule", e.rule},
          {"reason", to_valid_utf8(e.reason)}, {"failure", to_valid_utf8(e.failure)},
          {"bytes_up", e.bytes_up},         {"bytes_down", e.bytes_down}, {"duration_ms", e.duration_ms}};
}

nlohmann::json to_json(const failure& f) {
  return {{"error", {{"kind", to_string(f.kind)}, {"message", f.message}}}};
}

} // namespace corral
