// What every session is given to start its child: the runtime's launcher and its leases.
#pragma once

#include "actors/leases/lease_request.hpp"

namespace corral {

class child_launcher;

struct session_env {
  child_launcher* launcher = nullptr;
  lease_factory make_lease;
};

} // namespace corral
