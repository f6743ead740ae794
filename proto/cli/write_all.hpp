// Writing a whole buffer to one of the CLI's own descriptors (its stdout and stderr carry
// the program's bytes), retrying short writes and EINTR.
#pragma once

#include <string>

namespace corral::cli {

// False when the descriptor refused (EPIPE, a closed terminal): the caller decides whether
// that ends it.
bool write_all(int fd, const std::string& data);

} // namespace corral::cli
