#include "tiers/jail/workspace_modes.hpp"

namespace corral {

namespace {

void open_inside_workspace(jail_spec& s) {
  s.landlock_scope = false;
  s.landlock_deny_tcp = false;
}

} // namespace

void as_holder(launch_plan& plan) {
  plan.spec.mode = jail_mode::hold;
  open_inside_workspace(plan.spec);
}

void as_entering(launch_plan& plan, const holder_ref& holder, bool leave_running) {
  auto& s = plan.spec;
  s.mode = jail_mode::enter;
  s.mounts.clear();
  s.egress_ports.clear();
  open_inside_workspace(s);
  s.enter_pid = holder.pid;
  s.enter_start_time = holder.start_time;
  s.leave_running = leave_running;
  plan.isolation += "; in a workspace: its holder's namespaces, view, /tmp and processes are shared by its steps "
                    "(Landlock signal and abstract-socket scopes and TCP rules are off inside it), and its cgroup "
                    "budget bounds them all together";
}

} // namespace corral
