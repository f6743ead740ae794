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
using tighten_atom = caf::atom_constant<caf::atom("tighten")>;
using report_atom = caf::atom_constant<caf::atom("report")>;
using take_atom = caf::atom_constant<caf::atom("take")>;
using rearm_atom = caf::atom_constant<caf::atom("rearm")>;
using warm_atom = caf::atom_constant<caf::atom("warm")>;
using eof_wait_atom = caf::atom_constant<caf::atom("eofwait")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
// A workspace's lease and holder (actors/workspaces/workspace_holder.hpp).
using freeze_atom = caf::atom_constant<caf::atom("freeze")>;
using frozen_atom = caf::atom_constant<caf::atom("frozen")>;
using pids_atom = caf::atom_constant<caf::atom("pids")>;
using hold_atom = caf::atom_constant<caf::atom("hold")>;
using signal_atom = caf::atom_constant<caf::atom("signal")>;
// Sessions (see actors/sessions/session_messages.hpp).
using session_atom = caf::atom_constant<caf::atom("session")>;
using terminal_atom = caf::atom_constant<caf::atom("terminal")>;
using send_atom = caf::atom_constant<caf::atom("send")>;
using ack_atom = caf::atom_constant<caf::atom("ack")>;
using close_atom = caf::atom_constant<caf::atom("close")>;
using idle_atom = caf::atom_constant<caf::atom("idle")>;
using lifetime_atom = caf::atom_constant<caf::atom("lifetime")>;
using grace_atom = caf::atom_constant<caf::atom("grace")>;
using startup_atom = caf::atom_constant<caf::atom("startup")>;
using input_atom = caf::atom_constant<caf::atom("input")>;
using resize_atom = caf::atom_constant<caf::atom("resize")>;
using reattach_atom = caf::atom_constant<caf::atom("reattach")>;
using detach_atom = caf::atom_constant<caf::atom("detach")>;
using watch_atom = caf::atom_constant<caf::atom("watch")>;
using info_atom = caf::atom_constant<caf::atom("info")>;
// A stdio session's stdin alone ends (EOF after what was sent); the child goes on.
using stdin_eof_atom = caf::atom_constant<caf::atom("stdineof")>;

} // namespace corral
