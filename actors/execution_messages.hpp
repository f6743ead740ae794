// Messages between the supervisor, an execution and the execution's own actors.
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>

#include "actors/exec_inspect.hpp"
#include "actors/exec_request.hpp"
#include "actors/exec_result.hpp"
#include "actors/io/io_events.hpp"
#include "config/failure.hpp"

namespace corral {

// The one reply to (exec_atom, exec_request): a result, or why there is none.
// exec_request and exec_outcome are serializable (actors/exec_inspect.hpp): they cross
// machines to and from a node.
struct exec_outcome {
  bool ok = false;
  failure error;
  exec_result result;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, exec_outcome& x) {
  return f(caf::meta::type_name("exec_outcome"), x.ok, x.error, x.result);
}

// A collector's stream is complete (EOF, or closed by the execution's bound).
struct stream_done {
  stream_kind stream;
  captured_stream captured;
};

struct supervisor_stats {
  std::size_t running = 0;
  std::size_t queued = 0;
  std::size_t completed = 0;
  std::size_t warm_ready = 0;  // warm jails armed and waiting (actors/warm/warm_pool.hpp)
};

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::stream_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::supervisor_stats)
