// The spawner: asks the tier for a launch plan and hands it to the I/O loop, which starts
// the exec helper with the plan's jail spec. The spawn's outcome (io_spawned or
// io_spawn_failed) and every later process event go to the order's owner.
#pragma once

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/io/io_events.hpp"
#include "actors/io/io_loop.hpp"
#include "config/failure.hpp"
#include "tiers/tier.hpp"

namespace corral {

class io_loop;

struct spawn_order {
  process_id id = 0;
  launch_request request;
  lease_grant grant;
  bool stdin_pipe = false;
  caf::actor owner;
  output_route out;  // the collectors' routes (output_collector.hpp: collector_route)
  output_route err;
  caf::actor egress;  // the execution's egress_proxy, in allowlist network mode
};

// Reply to a spawn_order: what the plan will (not) enforce, or why there is no plan.
struct spawn_planned {
  bool ok = false;
  failure error;
  std::vector<std::string> not_enforced;
  std::string isolation;
  std::vector<std::string> masked;
};

caf::behavior spawner(caf::event_based_actor* self, io_loop* io,
                      std::shared_ptr<const tier> boundary, std::string helper_path);

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::spawn_order)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::spawn_planned)
