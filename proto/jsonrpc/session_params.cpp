#include "proto/jsonrpc/session_params.hpp"

#include "actors/message_framing.hpp"
#include "proto/jsonrpc/param_values.hpp"

namespace corral {

namespace {

using nlohmann::json;

// The members both kinds take. Answers false for a member that is not one of them.
template <class Request>
expected<bool> common_param(Request& r, const std::string& key, const json& v) {
  status read = ok();
  if (key == "argv") read = read_into(string_array_param(v, key), r.argv);
  else if (key == "env") read = read_into(string_object_param(v, key), r.env);
  else if (key == "tier") read = read_into(string_param(v, key), r.tier);
  else if (key == "lifetime") read = read_into(seconds_param(v, key), r.lifetime);
  else if (key == "memory" || key == "memory_limit") read = read_into(positive_param(v, key), r.memory_limit_bytes);
  else if (key == "pids" || key == "pids_limit") read = read_into(positive_param(v, key), r.pids_limit);
  else if (key == "cpu" || key == "cpu_cores") read = read_into(positive_number_param(v, key), r.cpu_cores);
  // Narrows the daemon profile's allow-list, as exec's does (config/tighten_network.hpp).
  else if (key == "network_allow") read = read_into(string_array_param(v, key), r.network_allow);
  // Runs in the caller's workspace, its files at /work (exec's `workspace`).
  else if (key == "workspace") read = read_into(workspace_param(v, key), r.workspace);
  else if (key == "cwd") read = read_into(string_param(v, key), r.cwd);
  else return false;
  if (!read) return read.error();
  return true;
}

// Every member but "kind" is a common one or one `own` reads (answering false for a
// member it does not know).
template <class Request, class Own>
expected<Request> read_params(const json& params, const char* kind, Own own) {
  Request r;
  for (auto& [key, v] : params.items()) {
    if (key == "kind") continue;
    auto known = common_param(r, key, v);
    if (known && !*known) known = own(r, key, v);
    if (!known) return known.error();
    if (!*known)
      return make_failure(failure_kind::invalid_request,
                          "unknown parameter \"" + key + "\" for session.open with kind \"" + kind + "\"");
  }
  return r;
}

expected<bool> stdio_param(session_request& r, const std::string& key, const json& v) {
  status read = ok();
  if (key == "framing") {
    auto mode = v.is_string() ? parse_framing_mode(v.get<std::string>()) : expected<framing_mode>(failure{});
    if (!mode) return bad_param(key, "\"newline\", \"content-length\" or \"raw\"");
    r.framing = *mode;
  } else if (key == "forward_stderr") read = read_into(bool_param(v, key), r.forward_stderr);
  else if (key == "idle_timeout") read = read_into(seconds_param(v, key), r.idle_timeout);
  else return false;
  if (!read) return read.error();
  return true;
}

expected<bool> terminal_param(terminal_request& r, const std::string& key, const json& v) {
  if (key == "rows" || key == "cols") {
    auto n = positive_param(v, key, 0xFFFF);
    if (!n) return n.error();
    (key == "rows" ? r.rows : r.cols) = static_cast<std::uint16_t>(*n);
  } else if (key == "echo") {
    if (auto s = read_into(bool_param(v, key), r.echo); !s) return s.error();
  } else {
    return false;
  }
  return true;
}

} // namespace

expected<session_request> stdio_params_from_json(const json& params) {
  auto r = read_params<session_request>(params, "stdio", stdio_param);
  if (r && r->argv.empty())
    return make_failure(failure_kind::invalid_request, "a stdio session needs a non-empty \"argv\"");
  return r;
}

expected<terminal_request> terminal_params_from_json(const json& params) {
  return read_params<terminal_request>(params, "terminal", terminal_param);
}

} // namespace corral
