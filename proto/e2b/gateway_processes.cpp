// envd's process service on a sandbox: Start and Connect (streams, answered by the
// process actor), List, SendInput, SendSignal, CloseStdin and Update.
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "proto/e2b/gateway_state.hpp"
#include "proto/http/connect_envelope.hpp"

namespace corral {

namespace {

constexpr auto kProcessBound = std::chrono::seconds(35);
// ProcessSelector: {"pid": N} or {"tag": "…"}.
running_process* select(sandbox_entry& sb, const json& m) {
  if (!m.contains("process") || !m["process"].is_object()) return nullptr;
  auto& sel = m["process"];
  if (sel.contains("pid") && sel["pid"].is_number_integer()) {
    auto it = sb.processes.find(sel["pid"].get<std::uint32_t>());
    return it == sb.processes.end() ? nullptr : &it->second;
  }
  if (sel.contains("tag") && sel["tag"].is_string())
    for (auto& [pid, p] : sb.processes)
      if (p.spec.tag == sel["tag"].get<std::string>()) return &p;
  return nullptr;
}

http_response no_process(const json& m) {
  return connect_error("not_found", "no running process " + (m.contains("process") ? m["process"].dump() : std::string("{}")) +
                                        " in the sandbox");
}

caf::result<http_response> start(gateway_self self, sandbox_entry& sb, http_request& r, const json& m) {
  if (!m.contains("process") || !m["process"].is_object() || !m["process"].contains("cmd") ||
      !m["process"]["cmd"].is_string())
    return connect_error("invalid_argument", "Start needs process.cmd");
  auto& p = m["process"];
  e2b_process_spec spec;
  spec.sandbox = sb.record.id;
  spec.principal = principal_of(sb.record);
  spec.pid = sb.next_pid++;
  spec.cmd = p["cmd"].get<std::string>();
  try {
    if (p.contains("args")) spec.args = p["args"].get<std::vector<std::string>>();
    if (p.contains("envs")) spec.request_envs = p["envs"].get<std::map<std::string, std::string>>();
    if (p.contains("cwd")) spec.cwd = p["cwd"].get<std::string>();
    if (m.contains("tag")) spec.tag = m["tag"].get<std::string>();
    if (m.contains("stdin")) spec.stdin_open = m["stdin"].get<bool>();
    if (m.contains("pty") && m["pty"].is_object()) {
      spec.pty = true;
      auto& size = m["pty"]["size"];
      spec.cols = size.value("cols", std::uint16_t{80});
      spec.rows = size.value("rows", std::uint16_t{24});
    }
  } catch (const std::exception& e) {
    return connect_error("invalid_argument", std::string("Start: ") + e.what());
  }
  if (spec.cwd.empty()) spec.cwd = kSandboxHome;
  // What the SDK's user expects: its home and name; then the sandbox's, then the call's.
  spec.env = {{"HOME", kSandboxHome}, {"USER", "user"}, {"LOGNAME", "user"}};
  for (auto& [k, v] : sb.record.env_vars) spec.env[k] = v;
  for (auto& [k, v] : spec.request_envs) spec.env[k] = v;
  spec.lifetime = call_timeout(r);
  auto pid = spec.pid;
  auto caller = caf::actor_cast<caf::actor>(self->current_sender());
  auto actor = spawn_e2b_process(self->system(), spec, self->state.config.supervisor, caf::actor{self}, caller);
  sb.processes.emplace(pid, running_process{actor, std::move(spec)});
  return subscribed();
}

template <class... Ts>
caf::result<http_response> ask_process(gateway_self self, running_process& p, Ts&&... xs) {
  auto rp = self->make_response_promise<http_response>();
  self->request(p.actor, kProcessBound, std::forward<Ts>(xs)...)
      .then([rp](http_response& h) mutable { rp.deliver(std::move(h)); },
            [rp](caf::error&) mutable { rp.deliver(connect_error("not_found", "the process has ended")); });
  return rp;
}

int signal_number(const std::string& name) {
  if (name == "SIGNAL_SIGTERM") return 15;
  if (name == "SIGNAL_SIGKILL") return 9;
  return 0;
}

} // namespace

caf::result<http_response> process_call(gateway_self self, sandbox_entry& sb, http_request& r, const std::string& method) {
  bool stream = method == "Start" || method == "Connect";
  auto m = rpc_message(r, stream);
  if (!m) return connect_error("invalid_argument", m.error().message);
  if (method == "Start") return start(self, sb, r, *m);
  if (method == "List") {
    json list = json::array();
    for (auto& [pid, p] : sb.processes) list.push_back(process_listing(p.spec));
    return json_response(200, {{"processes", list}});
  }
  if (method == "StreamInput")
    return connect_error("unimplemented", "corral's envd does not serve StreamInput; SendInput carries input");
  auto* p = select(sb, *m);
  if (!p) return no_process(*m);
  if (method == "Connect") {
    self->send(p->actor, e2b_subscribe_atom::value, caf::actor_cast<caf::actor>(self->current_sender()));
    return subscribed();
  }
  if (method == "SendInput") {
    auto& in = (*m)["input"];
    bool pty = in.is_object() && in.contains("pty");
    auto field = pty ? "pty" : "stdin";
    if (!in.is_object() || !in.contains(field) || !in[field].is_string())
      return connect_error("invalid_argument", "SendInput needs input.stdin or input.pty (base64)");
    auto bytes = base64_decode(in[field].get<std::string>(), base64_input::proto3_json);
    if (!bytes) return connect_error("invalid_argument", "the input is not base64");
    return ask_process(self, *p, input_atom::value, std::move(*bytes), pty);
  }
  if (method == "SendSignal") {
    int sig = signal_number(m->value("signal", std::string()));
    if (sig == 0) return connect_error("invalid_argument", "SendSignal takes SIGNAL_SIGTERM or SIGNAL_SIGKILL");
    return ask_process(self, *p, signal_atom::value, sig);
  }
  if (method == "CloseStdin") return ask_process(self, *p, stdin_eof_atom::value);
  if (method == "Update") {
    if (!m->contains("pty") || !(*m)["pty"].contains("size"))
      return connect_error("invalid_argument", "Update needs pty.size {cols, rows}");
    auto& size = (*m)["pty"]["size"];
    auto rows = size.value("rows", std::uint16_t{24});
    auto cols = size.value("cols", std::uint16_t{80});
    return ask_process(self, *p, resize_atom::value, rows, cols);
  }
  return connect_error("unimplemented", "corral's envd does not serve process." + method);
}

} // namespace corral
