// How the exec helper is started for a child (actors/launch/child_launcher.hpp).
#pragma once

#include <cstdint>

namespace corral {

enum class launch_mode : std::uint8_t {
  run,  // the helper builds the jail and starts the step's program in it at once
  arm,  // the helper builds the jail and waits on its fd 3 for a step (a warm jail)
  hold,  // a workspace's holder: the jail built, its init only reaps (jail_mode::hold)
  // A step entering a workspace is a `run` launch whose request names the holder
  // (launch_request::enter): the plan becomes jail_mode::enter.
};

} // namespace corral
