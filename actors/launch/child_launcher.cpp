#include "actors/launch/child_launcher.hpp"

#include "actors/execution.hpp"
#include "tiers/jail/workspace_modes.hpp"

namespace corral {

namespace {

// A program every view has (the system dirs): a warm jail is planned with it, and its
// launch replaces it with the step's.
const char* const kPlaceholderProgram = "/bin/sh";

launched_child launched(process_id id, launch_plan& plan) {
  return {id, std::move(plan.isolation), std::move(plan.not_enforced), std::move(plan.masked)};
}

// A jail made before any step (warm or a workspace's holder) is planned from the profile
// alone, with the placeholder as its program.
expected<launch_plan> plan_without_step(const tier& boundary, const arming& what, const lease_grant& grant) {
  launch_request placeholder;
  placeholder.argv = {kPlaceholderProgram};
  placeholder.scratch_dir = what.work_dir;
  placeholder.home = what.home;
  placeholder.effective = what.effective;
  placeholder.caller_path = what.caller_path;
  return boundary.plan(placeholder, grant);
}

// Its events go to owner; what it writes is nobody's until a step gives it routes.
child_wiring wiring_without_step(caf::actor owner) {
  child_wiring wiring;
  wiring.owner = owner;
  wiring.out = {owner, 0, overflow_policy::discard};
  wiring.err = {owner, 0, overflow_policy::discard};
  return wiring;
}

} // namespace

launch_request launch_request_for(const execution_plan& plan, const exec_step& step, bool controlling_tty) {
  launch_request request;
  request.argv = step.argv;
  request.env = step.env;
  request.scratch_dir = plan.work_dir;
  request.effective = plan.effective;
  request.caller_path = plan.caller_path;
  request.controlling_tty = controlling_tty;
  request.start_in_scratch = step.in_scratch;
  request.cwd = plan.cwd;
  request.leave_running = plan.leave_running;
  return request;
}

child_launcher::child_launcher(io_loop& io, std::string helper_path)
    : io_(&io), helper_path_(std::move(helper_path)) {}

spawn_command child_launcher::command_for(launch_mode mode, const jail_spec& spec, child_wiring wiring) {
  spawn_command cmd;
  cmd.id = next_id_++;
  cmd.program = helper_path_;
  cmd.argv = {"corral-exec"};
  if (mode == launch_mode::arm) {
    cmd.argv.push_back("--warm");
    // The spec framed, fd 3 kept open for the step's spec (tiers/jail/jail_spec.hpp).
    cmd.spec_bytes = spec_frame(serialize(spec));
    cmd.keep_spec_open = true;
  } else {
    cmd.spec_bytes = serialize(spec);
  }
  cmd.stdin_pipe = wiring.stdin_pipe;
  cmd.owner = std::move(wiring.owner);
  cmd.out = std::move(wiring.out);
  cmd.err = std::move(wiring.err);
  cmd.report_writes = wiring.report_writes;
  cmd.pty = wiring.pty;
  cmd.egress = std::move(wiring.egress);
  return cmd;
}

expected<launched_child> child_launcher::launch(const tier& boundary, const launch_request& request,
                                                const lease_grant& grant, child_wiring wiring) {
  auto plan = boundary.plan(request, grant);
  if (!plan) return plan.error();
  if (grant.enter.held()) as_entering(*plan, grant.enter, request.leave_running);
  auto cmd = command_for(launch_mode::run, plan->spec, std::move(wiring));
  auto id = cmd.id;
  io_->spawn(std::move(cmd));
  return launched(id, *plan);
}

expected<armed_child> child_launcher::arm(const tier& boundary, const arming& what, const lease_grant& grant,
                                          caf::actor owner) {
  auto plan = plan_without_step(boundary, what, grant);
  if (!plan) return plan.error();
  auto wiring = wiring_without_step(std::move(owner));
  wiring.stdin_pipe = true;  // a step without stdin gets EOF at once
  auto cmd = command_for(launch_mode::arm, plan->spec, std::move(wiring));
  armed_child jail{cmd.id, std::move(plan->spec)};
  io_->spawn(std::move(cmd));
  return jail;
}

expected<launched_child> child_launcher::hold(const tier& boundary, const arming& what, const lease_grant& grant,
                                              caf::actor owner) {
  auto plan = plan_without_step(boundary, what, grant);
  if (!plan) return plan.error();
  as_holder(*plan);
  auto cmd = command_for(launch_mode::hold, plan->spec, wiring_without_step(std::move(owner)));
  auto id = cmd.id;
  io_->spawn(std::move(cmd));
  return launched(id, *plan);
}

expected<launched_child> child_launcher::launch_armed(const armed_child& jail, const tier& boundary,
                                                      const launch_request& request, const lease_grant& grant,
                                                      child_wiring wiring) {
  auto plan = boundary.plan(request, grant);
  if (!plan) return plan.error();
  if (!same_boundary(plan->spec, jail.armed))
    return make_failure(failure_kind::internal,
                        "the warm jail was armed with another boundary than this request's plan asks for; "
                        "it was retired unused");
  io_->adopt(jail.id, std::move(wiring.owner), std::move(wiring.out), std::move(wiring.err));
  io_->launch(jail.id, spec_frame(serialize(plan->spec)));
  return launched(jail.id, *plan);
}

void child_launcher::retire_armed(process_id id) {
  io_->launch(id, "");
  io_->release(id);
}

} // namespace corral
