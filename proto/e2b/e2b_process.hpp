// One process an E2B client started in a sandbox (envd's process.Process/Start): a stdio
// session (pipes: stdout and stderr apart, stdin when asked for) or a terminal (a pty) in
// the sandbox's workspace, owned by this actor rather than by the HTTP stream that started
// it. Streams subscribe and unsubscribe (Start, Connect, a client gone mid-stream) while
// the process runs on, until it exits, its timeout or a signal ends it, or the sandbox
// ends. Its messages: proto/e2b/e2b_messages.hpp.
//
//   starting ──session opened──▶ running ──session_ended──▶ (end event, end frame) gone
//   starting ──refused──▶ (end frame with the error) gone
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <nlohmann/json.hpp>

namespace corral {

struct e2b_process_spec {
  std::string sandbox;    // its workspace's id
  std::string principal;  // the owning key's
  std::uint32_t pid = 0;  // the gateway's number for it in the sandbox
  std::string tag;
  std::string cmd;
  std::vector<std::string> args;
  std::map<std::string, std::string> request_envs;  // as the client sent them (List shows these)
  std::map<std::string, std::string> env;          // the child's: the sandbox's, then the request's
  std::string cwd;
  bool pty = false;
  std::uint16_t rows = 24;
  std::uint16_t cols = 80;
  bool stdin_open = false;  // false: EOF on stdin at once (E2B's default)
  // The command's timeout (Connect-Timeout-Ms): a session lifetime; 0: none.
  std::chrono::milliseconds lifetime{0};
};

// ProcessInfo: {"config": {"cmd", "args", "envs", "cwd"?}, "pid", "tag"?}.
nlohmann::json process_listing(const e2b_process_spec& spec);

caf::actor spawn_e2b_process(caf::actor_system& system, e2b_process_spec spec, caf::actor supervisor,
                             caf::actor gateway, caf::actor first_subscriber);

} // namespace corral
