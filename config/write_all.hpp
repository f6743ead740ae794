// Writing a whole buffer to a descriptor: short writes resumed, EINTR retried. Used on
// every floor (lease records, the exec helper's status pipe, the microvm agent, the CLI's
// stdout), so it sits in config/, the lowest floor. Async-signal-safe: no allocation.
#pragma once

#include <string_view>

namespace corral {

// False when the descriptor refused (EPIPE, a full disk, a closed terminal): errno says why,
// or is 0 when write(2) returned 0. The caller decides whether that ends it.
bool write_all(int fd, std::string_view bytes);

} // namespace corral
