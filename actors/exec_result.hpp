// What an execution reports, once, when it is over.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tiers/cgroups/resource_usage.hpp"
#include "tiers/workspace/change_manifest.hpp"

namespace corral {

// One verdict that never blurs how the execution ended. Checked in this order: a timeout
// or a limit explains a signal, so it wins over `signaled`.
enum class verdict {
  exited,            // the program exited by itself (see exit_code)
  signaled,          // a signal ended it that corral did not send (see term_signal)
  timed_out,         // corral terminated it at the deadline
  out_of_memory,     // the memory limit's OOM killer ended it
  pids_limit,        // it hit the process-count limit and failed or was ended
  output_truncated,  // it exited, but more output came than the cap keeps
  compile_failed,    // the compile step failed; the run step never started
  cancelled,         // the caller or the runtime ended it
};

const char* to_string(verdict v);

struct captured_stream {
  std::string data;            // at most the cap, cut at a UTF-8 boundary
  bool truncated = false;
  std::uint64_t dropped_bytes = 0;
};

// One setup step of the exec helper (spec, cgroup, namespaces, filesystem, landlock, …)
// and how long it took: where a launch's milliseconds go.
struct setup_step {
  std::string name;
  std::uint64_t micros = 0;
};

// One connection attempt through the egress proxy (allowlist network mode).
struct network_event {
  std::string host;
  std::uint16_t port = 0;
  std::string protocol;                // http_connect, http_forward, socks5
  std::vector<std::string> addresses;  // checked; the one connected to first
  std::string decision;                // allowed, denied, not_allowed, address_refused, …
  std::string rule;                    // the entry that decided, if one did
  std::string reason;                  // what the program was told
  std::string failure;                 // how an allowed connection failed or ended badly
  std::uint64_t bytes_up = 0;          // program → destination
  std::uint64_t bytes_down = 0;        // destination → program
  std::uint64_t duration_ms = 0;
};

// The result's audit: at most kMaxNetworkEvents, then only counted.
struct network_audit {
  std::vector<network_event> events;
  std::uint64_t dropped = 0;
};
inline constexpr std::size_t kMaxNetworkEvents = 1000;

// What changed in a workspace's files while an execution ran: by it, or by another
// execution in the same workspace at the same time (they share the files).
struct execution_changes {
  std::vector<tree_change> entries;  // added, modified, removed; sorted by path
  bool truncated = false;            // more than kMaxChanges: the list was cut
  std::string error;                 // the scan after failed: said instead of a list
};

struct exec_result {
  std::string execution_id;
  verdict how = verdict::exited;
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  captured_stream out;
  captured_stream err;
  std::chrono::microseconds duration{0};
  bool timed_out = false;
  std::string tier;                       // the tier that ran it
  std::string workspace;                  // the workspace it ran in (id); empty: none
  std::string isolation;                  // the isolation class that actually applied
  std::vector<std::string> not_enforced;  // requested limits this tier did not enforce
  std::vector<std::string> masked;        // protected paths covered in the view: "PATH (how: what)"
  resource_usage usage;
  std::vector<setup_step> steps;  // of every step (compile, then run), in order
  std::optional<network_audit> network;  // set in allowlist network mode only
  std::optional<execution_changes> changes;  // asked for with exec_request::changes
};

} // namespace corral
