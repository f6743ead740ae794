#include "proto/e2b/e2b_gateway.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/workspaces/workspace_messages.hpp"
#include "proto/e2b/gateway_state.hpp"
#include "proto/http/connect_envelope.hpp"

namespace corral {

namespace {

using e2b_retry_atom = caf::atom_constant<caf::atom("e2bretry")>;

constexpr auto kTick = std::chrono::seconds(1);
constexpr std::size_t kMaxRpcMessage = 16 << 20;
constexpr auto kRegistryBound = std::chrono::seconds(35);
// A sandbox's processes return their workspace loans shortly after they end; its end
// waits for that this many times, 100 ms apart.
constexpr int kEndAttempts = 100;

bool starts_with(const std::string& s, std::string_view prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// Which of the gateway's three surfaces a path belongs to: the answer's shape follows it
// (the control plane's and /files' {"code": status}, envd's Connect errors).
enum class surface : std::uint8_t { control, files, envd_rpc, none };

surface surface_of(const std::string& path) {
  if (starts_with(path, "/sandboxes") || starts_with(path, "/v2/sandboxes") || path == "/snapshots" ||
      starts_with(path, "/templates/"))
    return surface::control;
  if (path == "/files") return surface::files;
  if (starts_with(path, "/process.Process/") || starts_with(path, "/filesystem.Filesystem/")) return surface::envd_rpc;
  return surface::none;
}

// The user an envd call runs as: only the sandbox's one user (named "user", the SDK's
// default) exists; another name is refused rather than ignored.
std::optional<std::string> foreign_user(const http_request& r) {
  std::string user;
  if (auto q = r.query_param("username")) user = *q;
  if (auto* auth = r.header("authorization"); auth && starts_with(*auth, "Basic ")) {
    auto decoded = base64_decode(auth->substr(6), base64_input::proto3_json);
    if (decoded) user = decoded->substr(0, decoded->find(':'));
  }
  if (user.empty() || user == "user") return std::nullopt;
  return user;
}

caf::result<http_response> envd_call(gateway_self self, http_request& r) {
  auto& st = self->state;
  bool rpc = surface_of(r.path) == surface::envd_rpc;
  auto refuse = [&](int status, const std::string& code, const std::string& message) {
    return rpc ? connect_error(code, message) : control_error(status, message);
  };
  auto* id = r.header("e2b-sandbox-id");
  if (!id) return refuse(400, "invalid_argument", "an envd call needs the E2b-Sandbox-Id header");
  auto it = st.sandboxes.find(*id);
  // As E2B's proxy answers for a sandbox that is not running: 502.
  if (it == st.sandboxes.end() || it->second.ending)
    return control_error(502, "sandbox " + *id + " is not running");
  auto& sb = it->second;
  auto* token = r.header("x-access-token");
  if (!token || !same_secret(*token, sb.record.access_token))
    return refuse(401, "unauthenticated", "the sandbox's access token (X-Access-Token) is missing or wrong");
  if (auto user = foreign_user(r))
    return refuse(400, "invalid_argument",
                  "corral runs every process of a sandbox as its one user, 'user'; '" + *user + "' does not exist");
  if (r.path == "/files") return files_call(self, sb, r);
  if (starts_with(r.path, "/process.Process/")) return process_call(self, sb, r, r.path.substr(17));
  if (starts_with(r.path, "/filesystem.Filesystem/")) return filesystem_call(self, sb, r, r.path.substr(23));
  return connect_error("unimplemented", "corral's envd does not serve " + r.path);
}

caf::result<http_response> route(gateway_self self, http_request& r) {
  auto& st = self->state;
  if (r.path == "/health") {
    auto* id = r.header("e2b-sandbox-id");
    if (!id) return no_content();
    auto it = st.sandboxes.find(*id);
    return it != st.sandboxes.end() && !it->second.ending ? no_content()
                                                          : control_error(502, "sandbox " + *id + " is not running");
  }
  auto where = surface_of(r.path);
  if (where == surface::control) {
    auto* key = r.header("x-api-key");
    auto found = key ? st.keys->find(*key) : std::nullopt;
    if (!found) return control_error(401, "Invalid API key: corral knows keys from `corral e2b key add`");
    return control_call(self, *found, r);
  }
  if (where != surface::none) return envd_call(self, r);
  return control_error(404, "corral's E2B gateway does not serve " + r.method + " " + r.path);
}

void try_end(gateway_self self, const std::string& id, int attempts_left) {
  auto& st = self->state;
  auto it = st.sandboxes.find(id);
  if (it == st.sandboxes.end()) return;
  auto principal = principal_of(it->second.record);
  self->request(st.config.workspaces, kRegistryBound, ws_end_atom::value, id, principal, false)
      .then(
          [=](workspace_reply& w) {
            auto& s = self->state;
            auto at = s.sandboxes.find(id);
            if (at == s.sandboxes.end()) return;
            bool gone = w.ok || w.error.kind == failure_kind::not_found;
            // Refused while its processes' loans are still on their way back.
            if (!gone && w.error.kind == failure_kind::refused && attempts_left > 0)
              return (void)self->delayed_send(self, std::chrono::milliseconds(100), e2b_retry_atom::value, id,
                                              attempts_left - 1);
            if (!gone) spdlog::warn("e2b: sandbox {} could not end: {}", id, w.error.message);
            remove_sandbox_record(s.config.dir, id);
            auto waiting = std::move(at->second.on_end);
            s.sandboxes.erase(at);
            for (auto& done : waiting) done(gone);
          },
          [=](caf::error& e) {
            spdlog::warn("e2b: ending sandbox {}: {}", id, self->system().render(e));
            auto& s = self->state;
            auto at = s.sandboxes.find(id);
            if (at == s.sandboxes.end()) return;
            at->second.ending = false;
            auto waiting = std::move(at->second.on_end);
            for (auto& done : waiting) done(false);
          });
}

void expire(gateway_self self) {
  auto now = unix_ms_now();
  std::vector<std::string> over;
  for (auto& [id, sb] : self->state.sandboxes)
    if (!sb.ending && sb.record.end_at_ms <= now) over.push_back(id);
  for (auto& id : over) end_sandbox(self, id, "its timeout passed", [](bool) {});
}

// The records a previous daemon left: kept where their workspace lives on.
void adopt(gateway_self self) {
  auto& st = self->state;
  std::vector<std::string> problems;
  for (auto& r : read_sandbox_records(st.config.dir, problems)) {
    auto principal = principal_of(r);
    self->request(st.config.workspaces, kRegistryBound, ws_get_atom::value, r.id, principal)
        .then(
            [=](workspace_reply& w) {
              if (!w.ok) {
                spdlog::info("e2b: sandbox {} ended while the daemon was away", r.id);
                return remove_sandbox_record(self->state.config.dir, r.id);
              }
              sandbox_entry e;
              e.record = r;
              self->state.sandboxes.emplace(r.id, std::move(e));
              spdlog::info("e2b: sandbox {} adopted (its processes did not survive the restart)", r.id);
            },
            [](caf::error&) {});
  }
  for (auto& p : problems) spdlog::warn("e2b: a sandbox record was skipped: {}", p);
}

} // namespace

expected<json> rpc_message(const http_request& r, bool stream) {
  std::string_view text = r.body;
  if (stream) {
    auto frames = decode_envelopes(r.body, kMaxRpcMessage);
    if (!frames) return frames.error();
    if (frames->empty()) return make_failure(failure_kind::invalid_request, "the stream's request has no message");
    text = frames->front().payload;
  }
  if (text.empty()) return json::object();
  try {
    auto j = json::parse(text);
    if (j.is_object()) return j;
  } catch (const std::exception&) {
  }
  return make_failure(failure_kind::invalid_request, "the request message is not a JSON object");
}

std::chrono::milliseconds call_timeout(const http_request& r) {
  auto* h = r.header("connect-timeout-ms");
  if (!h) return std::chrono::milliseconds(0);
  try {
    return std::chrono::milliseconds(std::max<long long>(0, std::stoll(*h)));
  } catch (const std::exception&) {
    return std::chrono::milliseconds(0);
  }
}

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string principal_of(const sandbox_record& r) { return key_principal(r.key); }

void end_sandbox(gateway_self self, const std::string& id, const char* why, std::function<void(bool)> done) {
  auto& st = self->state;
  auto it = st.sandboxes.find(id);
  if (it == st.sandboxes.end()) return done(false);
  auto& sb = it->second;
  sb.on_end.push_back(std::move(done));
  if (sb.ending) return;
  sb.ending = true;
  spdlog::info("e2b: sandbox {} ends ({})", id, why);
  for (auto& [pid, p] : sb.processes) self->send(p.actor, cancel_atom::value);
  for (auto& w : sb.watches) self->send(w, cancel_atom::value);
  try_end(self, id, kEndAttempts);
}

caf::actor spawn_e2b_gateway(caf::actor_system& system, e2b_gateway_config config) {
  return system.spawn([](gateway_self self, e2b_gateway_config config) -> caf::behavior {
    self->state.config = std::move(config);
    self->state.keys.emplace(self->state.config.dir);
    // A directory watch ended (its client went, its timeout, its directory): its slot frees.
    self->set_down_handler([=](caf::down_msg& d) {
      for (auto& [id, sb] : self->state.sandboxes)
        sb.watches.erase(std::remove_if(sb.watches.begin(), sb.watches.end(),
                                        [&](const caf::actor& w) { return w.address() == d.source; }),
                         sb.watches.end());
    });
    adopt(self);
    self->delayed_send(self, kTick, e2b_tick_atom::value);
    return {
        [=](e2b_call_atom, http_request& r) -> caf::result<http_response> {
          // A field of the wrong JSON type throws from deep in a handler: it is the
          // caller's error, and must not end the gateway every other caller shares.
          try {
            return route(self, r);
          } catch (const std::exception& e) {
            std::string message = std::string("malformed request: ") + e.what();
            if (surface_of(r.path) == surface::envd_rpc) return connect_error("invalid_argument", message);
            return control_error(400, message);
          }
        },
        [=](e2b_gone_atom, std::string& sandbox, std::uint32_t pid) {
          auto it = self->state.sandboxes.find(sandbox);
          if (it != self->state.sandboxes.end()) it->second.processes.erase(pid);
        },
        [=](e2b_retry_atom, std::string& id, int attempts_left) { try_end(self, id, attempts_left); },
        [=](e2b_tick_atom) {
          expire(self);
          self->delayed_send(self, kTick, e2b_tick_atom::value);
        },
    };
  }, std::move(config));
}

bool is_stream_call(const std::string& path) {
  return path == "/process.Process/Start" || path == "/process.Process/Connect" ||
         path == "/filesystem.Filesystem/WatchDir";
}

} // namespace corral
