// Every atom of the runtime's actors, in one place (CAF 0.17: at most 10 characters).
#pragma once

#include <caf/atom.hpp>

namespace corral {

using exec_atom = caf::atom_constant<caf::atom("exec")>;
using run_atom = caf::atom_constant<caf::atom("run")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using timeout_atom = caf::atom_constant<caf::atom("timeout")>;
using fire_atom = caf::atom_constant<caf::atom("fire")>;
using spawn_atom = caf::atom_constant<caf::atom("spawn")>;
using acquire_atom = caf::atom_constant<caf::atom("acquire")>;
using attach_atom = caf::atom_constant<caf::atom("attach")>;
using terminate_atom = caf::atom_constant<caf::atom("terminate")>;
using escalate_atom = caf::atom_constant<caf::atom("escalate")>;
using finish_atom = caf::atom_constant<caf::atom("finish")>;
using eof_wait_atom = caf::atom_constant<caf::atom("eofwait")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;

} // namespace corral
