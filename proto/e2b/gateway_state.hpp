// The E2B gateway's state and the handlers its files share (e2b_gateway.cpp routes;
// gateway_control.cpp, gateway_processes.cpp and gateway_files.cpp answer).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>
#include <optional>
#include <string>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "proto/e2b/api_keys.hpp"
#include "proto/e2b/e2b_gateway.hpp"
#include "proto/e2b/e2b_json.hpp"
#include "proto/e2b/e2b_messages.hpp"
#include "proto/e2b/e2b_process.hpp"
#include "proto/e2b/sandbox_record.hpp"
#include "proto/http/http_message.hpp"

namespace corral {

struct running_process {
  caf::actor actor;
  e2b_process_spec spec;
};

struct sandbox_entry {
  sandbox_record record;
  std::map<std::uint32_t, running_process> processes;
  std::uint32_t next_pid = 1;
  std::vector<caf::actor> watches;  // its directory watches (dir_watch.hpp), monitored
  bool ending = false;  // its processes are being ended, then its workspace
  std::vector<std::function<void(bool)>> on_end;  // told whether it went
};

struct gateway_state {
  gateway_state() = default;  // CAF 0.17 would build an aggregate from the actor pointer
  e2b_gateway_config config;
  std::optional<key_book> keys;
  std::map<std::string, sandbox_entry> sandboxes;
};

using gateway_self = caf::stateful_actor<gateway_state>*;
using json = nlohmann::json;

// Delivers a promised answer (as a statement: CAF 0.17 response handlers return void).
inline void answer(caf::response_promise rp, http_response r) { rp.deliver(std::move(r)); }

// The error handler of a call to the workspace registry: a 500 that says it did not answer.
inline auto registry_error(gateway_self self, caf::response_promise rp) {
  return [self, rp](caf::error& e) mutable {
    answer(rp, control_error(500, "workspaces: " + self->system().render(e)));
  };
}

std::int64_t unix_ms_now();
// A unary call's JSON body, or a stream call's one enveloped message (Connect).
expected<json> rpc_message(const http_request& r, bool stream);
// The command's or watch's timeout as the SDK sends it (Connect-Timeout-Ms); 0: none.
std::chrono::milliseconds call_timeout(const http_request& r);
std::string principal_of(const sandbox_record& r);

// Control plane (/sandboxes, /v2/sandboxes), for the key `key`.
caf::result<http_response> control_call(gateway_self self, const api_key_record& key, http_request& r);
// Ends a sandbox: its processes, then its workspace; `done` gets whether it went.
void end_sandbox(gateway_self self, const std::string& id, const char* why, std::function<void(bool)> done);

// envd's process service (/process.Process/*) in `sb`.
caf::result<http_response> process_call(gateway_self self, sandbox_entry& sb, http_request& r,
                                        const std::string& method);
// envd's filesystem service (/filesystem.Filesystem/*) and /files in `sb`.
caf::result<http_response> filesystem_call(gateway_self self, sandbox_entry& sb, http_request& r,
                                           const std::string& method);
caf::result<http_response> files_call(gateway_self self, sandbox_entry& sb, http_request& r);

} // namespace corral
