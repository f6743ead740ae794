#include "proto/nodes/node_gateway.hpp"

#include <chrono>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/execution_messages.hpp"

namespace corral {

namespace {

caf::behavior node_gateway(caf::event_based_actor* self, caf::actor supervisor, node_load identity) {
  self->monitor(supervisor);
  self->set_down_handler([=](caf::down_msg& down) {
    if (down.source == supervisor.address()) self->quit(down.reason);
  });
  return {
      [=](exec_atom, exec_request& request) -> caf::result<exec_outcome> {
        request.live_output.reset();  // arrives empty; never a remote subscriber
        auto reply = self->make_response_promise<exec_outcome>();
        reply.delegate(supervisor, exec_atom::value, std::move(request));
        return reply;
      },
      [=](load_atom) -> caf::result<node_load> {
        auto reply = self->make_response_promise<node_load>();
        self->request(supervisor, std::chrono::seconds(5), stats_atom::value)
            .then([=](const supervisor_stats& stats) mutable {
              auto load = identity;
              load.running = stats.running;
              load.queued = stats.queued;
              reply.deliver(std::move(load));
            },
            [=](caf::error& e) mutable { reply.deliver(std::move(e)); });
        return reply;
      },
  };
}

} // namespace

caf::actor spawn_node_gateway(caf::actor_system& sys, caf::actor supervisor, node_load identity) {
  return sys.spawn(node_gateway, std::move(supervisor), std::move(identity));
}

} // namespace corral
