#include "tiers/host_tier.hpp"

namespace corral {

tier_capabilities host_tier::capabilities() const {
  tier_capabilities c;
  c.timeout = true;
  c.environment_isolation = true;
  return c;
}

expected<launch_plan> host_tier::plan(const launch_request& request, const lease_grant&) const {
  if (request.argv.empty()) return make_failure(failure_kind::invalid_request, "argv is empty");
  auto program = resolve_program(request.argv.front(), request.caller_path);
  if (!program) return program.error();

  launch_plan plan;
  plan.spec.mode = jail_mode::host;
  plan.spec.program = *program;
  plan.spec.argv = request.argv;
  plan.spec.envp = to_envp(request.env);
  plan.spec.cwd = start_dir(request, request.scratch_dir);
  plan.spec.kill_grace_ms = static_cast<std::uint32_t>(request.effective.kill_grace.count());
  plan.spec.controlling_tty = request.controlling_tty;
  // Said, not silently dropped: the caller asked for these and the host tier cannot hold them.
  if (request.effective.memory_bytes) plan.not_enforced.push_back("memory_limit");
  if (request.effective.pids) plan.not_enforced.push_back("pids_limit");
  if (request.effective.cpu_cores) plan.not_enforced.push_back("cpu_limit");
  plan.not_enforced.push_back("filesystem_isolation");
  plan.not_enforced.push_back("network_isolation");
  plan.isolation = "host: subprocess only (cleared environment, own session, descendants killed); "
                   "no filesystem, network or resource isolation";
  return plan;
}

} // namespace corral
