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
// A stdio client ended its input (EOF) but still reads: what it asked before is answered,
// then the connection asks the loop to close it (socket_loop::close).
struct conn_input_ended {};
// The daemon is stopping: nothing more is read; the connection answers what is in flight
// (kStopping) and then asks the loop to close it.
struct conn_stopping {};

// Exec job -> connection actor: a finished line to write, and the job's end.
using rpc_out_atom = caf::atom_constant<caf::atom("rpcout")>;
using job_done_atom = caf::atom_constant<caf::atom("jobdone")>;
using job_cancel_atom = caf::atom_constant<caf::atom("jobcancel")>;

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::conn_line)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::conn_oversized)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::conn_closed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::conn_input_ended)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::conn_stopping)
