#include "actors/spawner.hpp"

#include "actors/io/io_loop.hpp"
#include "tiers/jail/jail_spec.hpp"

namespace corral {

caf::behavior spawner(caf::event_based_actor*, io_loop* io, std::shared_ptr<const tier> boundary,
                      std::string helper_path) {
  return {
      [=](spawn_order& order) -> spawn_planned {
        auto plan = boundary->plan(order.request, order.grant);
        if (!plan) return {false, plan.error(), {}, {}, {}};
        spawn_command cmd;
        cmd.id = order.id;
        cmd.program = helper_path;
        cmd.argv = {"corral-exec"};
        cmd.stdin_pipe = order.stdin_pipe;
        cmd.spec_bytes = serialize(plan->spec);
        cmd.owner = order.owner;
        cmd.out = std::move(order.out);
        cmd.err = std::move(order.err);
        cmd.egress = std::move(order.egress);
        io->spawn(std::move(cmd));
        return {true, {}, plan->not_enforced, plan->isolation, plan->masked};
      },
  };
}

} // namespace corral
