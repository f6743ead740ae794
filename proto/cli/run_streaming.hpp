// `corral run` in-process: the request runs through runtime::exec with output callbacks
// (actors/exec_streaming.hpp), which write each piece to our stdout or stderr as it
// arrives (never past the cap: the pieces are what the result keeps); SIGINT, SIGTERM and
// SIGHUP cancel it through its exec_control.
//
// A signal cancels the execution through the supervisor's own cancel path (SIGTERM to the
// whole cgroup, SIGKILL after the grace); a second one cancels again, which kills at once.
// Edges: a signal before the execution has started waits until execution_started names
// it; one after the program exited but before the result is a cancel the execution ignores
// once finishing. Either way the result comes, what arrived is printed, and the command
// exits 128+signal (130, 143, 129) once the runtime has removed the lease.
#pragma once

#include "actors/runtime.hpp"
#include "proto/cli/run_options.hpp"

namespace corral::cli {

int run_streaming(runtime& rt, const run_options& options);

} // namespace corral::cli
