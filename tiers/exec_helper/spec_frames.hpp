// Reading the length-prefixed frames of a warm helper's fd 3 (see spec_frame in
// tiers/jail/jail_spec.hpp): the armed spec first, the launch when an execution takes the jail.
#pragma once

#include <string>

namespace corral::helper {

enum class frame_read {
  ok,
  eof,     // closed before a frame began: the runtime retired the jail
  broken,  // a read error, a short frame or a length over kMaxFrameBytes
};

frame_read read_frame(int fd, std::string& out);

} // namespace corral::helper
