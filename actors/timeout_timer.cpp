#include "actors/timeout_timer.hpp"

#include "actors/atoms.hpp"

namespace corral {

caf::behavior timeout_timer(caf::event_based_actor* self, caf::actor execution,
                            std::chrono::milliseconds deadline) {
  self->delayed_send(self, deadline, fire_atom::value);
  return {
      [=](fire_atom) {
        self->send(execution, timeout_atom::value);
        self->quit();
      },
  };
}

} // namespace corral
