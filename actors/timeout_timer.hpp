// The timeout: one actor per execution that sends timeout_atom to its execution at the
// deadline. Linked to the execution, so it dies with it and never fires late.
#pragma once

#include <chrono>

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>

namespace corral {

caf::behavior timeout_timer(caf::event_based_actor* self, caf::actor execution,
                            std::chrono::milliseconds deadline);

} // namespace corral
