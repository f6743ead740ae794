// What a caller asks corral to run. Validated by the supervisor against the frozen profile.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace caf {
class actor;
}

namespace corral {

struct exec_request {
  // "argv" execs `argv` literally; "command" runs `code` with sh -c; other languages write
  // `code` to a source file in the scratch dir (see config/language.hpp).
  std::string language = "argv";
  std::vector<std::string> argv;
  std::string code;
  std::optional<std::string> stdin_data;
  // Only tighten the profile; see the supervisor's admission.
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<std::uint64_t> memory_limit_bytes;
  std::optional<std::uint64_t> output_cap;
  std::optional<std::uint64_t> pids_limit;
  std::optional<double> cpu_cores;
  // Overrides the profile's environment, which overrides nothing of the host's: the
  // child's environment is built from these two alone.
  std::map<std::string, std::string> env;
  // Narrows the profile's network allow-list (config/tighten_network.hpp); unset: the
  // profile's lists as they are.
  std::optional<std::vector<std::string>> network_allow;
  // Empty: the profile's tier.
  std::string tier;
  // Optional: receives execution_started once, then output_chunk for each piece of kept
  // output while it runs (the result still carries all of it). Not part of the policy.
  // It must answer each chunk with (ack_atom, bytes) to the chunk's sender once passed
  // on: past kLiveOutputWindow unacknowledged bytes the child waits (output_collector.hpp).
  // When every slot is taken it first gets execution_queued with its place in the line.
  // Held by pointer so that this header, and a program that only fills and sends requests
  // (the lean CLI's daemon path, proto/cli/front/), need not link CAF.
  std::shared_ptr<const caf::actor> live_output;
  // A workspace (id or its owner's name) whose files are this execution's /work
  // (actors/workspaces/); empty: a fresh scratch dir, gone after.
  std::string workspace;
  // Who may use that workspace: its creator. The daemon sets "uid:N" from the peer's
  // credentials; the embedding program's default is "lib".
  std::string principal = "lib";
  // With a workspace: the result lists what changed in its files while this ran
  // (exec_result::changes); costs a scan, with hashes, before and after.
  bool changes = false;
  // In a workspace: what the program leaves running in the background (a server started
  // with `&`) lives on in the workspace after it exits, listed by `ps` and ended by `kill`
  // or the workspace's end. Default: ended with the execution.
  bool leave_running = false;
  // Where the program starts, as the boundary sees it: an absolute path, or one relative to
  // its working directory (/work, the workspace's files, or the profile's --cwd). Empty: that
  // working directory. It grants nothing: a directory the boundary hides cannot be entered.
  std::string cwd;
  // Who asked (the daemon: the connection), for fair queuing: when every slot is taken,
  // clients' executions take turns round robin. 0: the embedding program; not serialized.
  std::uint64_t client = 0;
};

} // namespace corral
