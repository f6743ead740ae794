#include "actors/execution_planner.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "config/tighten.hpp"
#include "config/tighten_network.hpp"
#include "tiers/profile_fit.hpp"
#include "tiers/jail/scratch_dir.hpp"

namespace corral {

namespace {

bool has_nul(const std::string& s) { return s.find('\0') != std::string::npos; }

status check_text(const std::string& what, const std::string& s) {
  if (has_nul(s))
    return make_failure(failure_kind::invalid_request,
                        what + " contains a NUL byte, which no program can receive");
  return ok();
}

// The host variables a toolchain may see while compiling: only the allowlisted names.
std::map<std::string, std::string> toolchain_env(const std::vector<std::string>& allowlist) {
  std::map<std::string, std::string> env;
  for (auto& key : allowlist)
    if (const char* v = std::getenv(key.c_str())) env[key] = v;
  return env;
}

// An execution in a workspace asks for at most the workspace's limit, and gets it unasked.
template <class T>
status within_workspace(const char* what, std::optional<T>& asked, const std::optional<T>& workspace) {
  if (!workspace) return ok();
  if (asked && *asked > *workspace)
    return make_failure(failure_kind::refused, std::string("the request's ") + what + " limit is more than its workspace's (" +
                                                   std::to_string(*workspace) + ")");
  if (!asked) asked = workspace;
  return ok();
}

} // namespace

status validate_request(const exec_request& r) {
  if (r.language == "argv") {
    if (r.argv.empty()) return make_failure(failure_kind::invalid_request, "argv is empty: name a program to run");
    if (r.argv.front().empty())
      return make_failure(failure_kind::invalid_request, "argv[0] is empty: name a program to run");
  } else if (r.code.empty() && r.language != "command") {
    return make_failure(failure_kind::invalid_request, "no code given for language '" + r.language + "'");
  }
  for (std::size_t i = 0; i < r.argv.size(); ++i)
    if (auto s = check_text("argv[" + std::to_string(i) + "]", r.argv[i]); !s) return s;
  if (r.language == "command" && r.code.empty())
    return make_failure(failure_kind::invalid_request, "no command given");
  if (auto s = check_text("the code", r.code); !s) return s;
  for (auto& [k, v] : r.env) {
    if (k.empty() || k.find('=') != std::string::npos || has_nul(k))
      return make_failure(failure_kind::invalid_request,
                          "environment variable name '" + k + "' is empty or contains '=' or NUL");
    if (auto s = check_text("environment variable " + k, v); !s) return s;
  }
  if (r.timeout && r.timeout->count() <= 0)
    return make_failure(failure_kind::invalid_request, "the timeout must be positive");
  if (auto s = check_text("cwd", r.cwd); !s) return s;
  if (r.cwd.size() > 4096) return make_failure(failure_kind::invalid_request, "cwd is longer than 4096 bytes");
  return ok();
}

expected<execution_plan> plan_execution(const exec_request& r, const std::string& id,
                                        const planning_context& ctx) {
  if (auto s = validate_request(r); !s) return s.error();
  if (r.changes && !ctx.workspace)
    return make_failure(failure_kind::invalid_request,
                        "changes lists what an execution changed in its workspace: it needs a workspace");
  if (r.leave_running && !(ctx.workspace && ctx.workspace->holder))
    return make_failure(failure_kind::invalid_request,
                        ctx.workspace ? "leave_running needs a workspace with a holder, which the allow-list network mode "
                                        "does not give (each execution there is a jail of its own)"
                                      : "leave_running keeps background processes in a workspace: it needs a workspace");
  const profile& prof = *ctx.prof;

  limit_request asked;
  asked.timeout = r.timeout;
  asked.memory_bytes = r.memory_limit_bytes;
  asked.output_cap = r.output_cap;
  asked.pids = r.pids_limit;
  asked.cpu_cores = r.cpu_cores;
  if (ctx.workspace) {
    const auto& w = ctx.workspace->record;
    if (auto s = within_workspace("memory", asked.memory_bytes, w.memory_bytes); !s) return s.error();
    if (auto s = within_workspace("pids", asked.pids, w.pids); !s) return s.error();
    if (auto s = within_workspace("cpu", asked.cpu_cores, w.cpu_cores); !s) return s.error();
  }
  auto effective = tighten(prof, asked);
  if (!effective) return effective.error();
  if (r.stdin_data && r.stdin_data->size() > effective->stdin_cap)
    return make_failure(failure_kind::limit_exceeded,
                        "stdin is " + std::to_string(r.stdin_data->size()) +
                            " bytes; the profile allows at most " + std::to_string(effective->stdin_cap));

  if (auto refusal = profile_refusal(*ctx.boundary, prof)) return *refusal;
  auto egress = tighten_network(prof, r.network_allow);
  if (!egress) return egress.error();

  auto lang = prof.languages.find(r.language);
  if (!lang) return lang.error();

  execution_plan plan;
  plan.id = id;
  plan.boundary = ctx.boundary;
  plan.effective = *effective;
  plan.stdin_data = r.stdin_data;
  plan.live_output = r.live_output ? *r.live_output : caf::actor{};
  plan.caller_path = ctx.caller_path;
  plan.cwd = r.cwd;
  plan.network = prof.network;
  plan.egress = std::move(*egress);

  // The child's environment: the policy's, then the request's on top. Nothing of the host's.
  std::map<std::string, std::string> env = prof.env;
  for (auto& [k, v] : r.env) env[k] = v;

  if (ctx.workspace) {
    if (!lang->source_file.empty() || !lang->compile.empty())
      return make_failure(failure_kind::invalid_request,
                          "language '" + r.language + "' writes a source file, which in a workspace would land among its "
                          "files; run it with argv or command (e.g. python3 -c CODE)");
    plan.work_dir = ctx.workspace->root;
    plan.workspace = ctx.workspace->id;
    plan.workspace_loan = ctx.workspace->loan;
    plan.workspace_holder = ctx.workspace->holder;
    plan.leave_running = r.leave_running;
    plan.not_enforced.push_back("workspace_disk_quota");
    // With a holder the workspace's cgroup bounds all its steps together; a step's own
    // tighter memory, pids or cpu limit is not held apart from it.
    const auto& w = ctx.workspace->record;
    if (ctx.workspace->holder && (effective->memory_bytes != w.memory_bytes || effective->pids != w.pids ||
                                  effective->cpu_cores != w.cpu_cores))
      plan.not_enforced.push_back("per_execution_limits_in_workspace");
  } else {
    // Made by the execution when it starts cold (a warm jail has its own): the supervisor,
    // which plans every request, makes no dir and mounts nothing, and a queued plan holds
    // nothing on disk.
    plan.scratch_parent = ctx.scratch_parent;
    if (!scratch_dir_bounded()) plan.not_enforced.push_back("scratch_size");
  }

  if (r.language == "argv") {
    plan.steps.push_back({r.argv, env, false});
    return plan;
  }
  // Relative to the working directory, which is the scratch dir on every tier (a jail sees
  // it at its own virtual path), so the same argv works inside and outside.
  std::string src = lang->source_file;
  std::string bin = "./main";
  if (!src.empty()) plan.scratch_files[src] = r.code;
  if (!lang->compile.empty()) {
    auto compile_env = toolchain_env(lang->compile_env_allowlist);
    for (auto& [k, v] : env) compile_env[k] = v;
    plan.steps.push_back({expand_placeholders(lang->compile, src, bin, r.code), compile_env, true, true});
  }
  auto run = expand_placeholders(lang->run, src, bin, r.code);
  // Extra argv after the language's own: arguments for the program.
  for (auto& a : r.argv) run.push_back(a);
  plan.steps.push_back({run, env, false, !src.empty() || !lang->compile.empty()});
  return plan;
}

} // namespace corral
