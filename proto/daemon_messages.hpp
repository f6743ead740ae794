// Messages between the daemon's socket loop, its connection actors and their exec jobs
// (CAF 0.17 atoms: at most 10 characters).
#pragma once

#include <cstdint>
#include <string>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

namespace corral {

using connection_id = std::uint64_t;

// Loop -> connection actor.
struct conn_line {
  std::string text;  // one line without its newline
};
struct conn_oversized {
  std::size_t limit;
};
// The client hung up, was disconnected (it stopped reading), or the daemon is stopping.
struct conn_closed {
  std::string reason;
};

// Exec job -> connection actor: a finished line to write, and the job's end.
using rpc_out_atom = caf::atom_constant<caf::atom("rpcout")>;
using job_done_atom = caf::atom_constant<caf::atom("jobdone")>;
using job_cancel_atom = caf::atom_constant<caf::atom("jobcancel")>;

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::conn_line)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::conn_oversized)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::conn_closed)
