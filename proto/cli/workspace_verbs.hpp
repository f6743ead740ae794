// The plumbing every `corral workspace` verb shares: its common flags, the daemon
// connection, one call shown as text or JSON, and how a refusal ends the command.
// The verbs: workspace_command.cpp (workspaces, files, changes), snapshot_verbs.cpp and
// process_verbs.cpp.
#pragma once

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/failure.hpp"
#include "proto/daemon/daemon_client.hpp"

namespace corral::cli {

struct ws_args {
  std::string socket;
  bool json = false;
  std::vector<std::string> rest;  // the verb's own arguments, in order
};

// The usage text (workspace_command.cpp).
const char* workspace_usage();

// The reason on stderr; the refused exit status.
int refuse(const failure& f);
// What was wrong with the command line, then the usage.
int usage_error(const std::string& what);

// Reads --connect and --json wherever they stand before "--" (exec's program may use them).
ws_args split_common(const std::vector<std::string>& args);
expected<daemon_client> connect(const ws_args& a);

// "2026-12-06 03:14", local time.
std::string time_text(std::int64_t unix_seconds);

// One call; its answer printed as JSON with --json, else by `show`.
template <class Show>
int call_and_show(const ws_args& a, const std::string& method, const nlohmann::json& params, Show show) {
  auto c = connect(a);
  if (!c) return refuse(c.error());
  auto r = c->call(method, params);
  if (!r) return refuse(r.error());
  if (a.json) std::cout << r->dump() << "\n";
  else show(*r);
  return 0;
}

// The snapshot verbs (snapshot_verbs.cpp).
int snapshot_verb(const ws_args& a);
int snapshots_verb(const ws_args& a);
int snapshot_rm_verb(const ws_args& a);

// The process verbs (process_verbs.cpp).
int pause_verb(const ws_args& a);
int resume_verb(const ws_args& a);
int ps_verb(const ws_args& a);
int kill_verb(const ws_args& a);
int terminals_verb(const ws_args& a);

} // namespace corral::cli
