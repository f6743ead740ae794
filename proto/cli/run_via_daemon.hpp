// `corral run` through a daemon (--connect SOCKET, or CORRAL_CONNECT): the same output and
// exit status as in-process, with the daemon doing the work. Needs no actor runtime, so the
// program every command starts serves it alone (proto/cli/front/).
#pragma once

#include "proto/cli/run_options.hpp"

namespace corral::cli {

// Output streams as it arrives (all of it at the end with --json, as in-process).
int run_via_daemon(const run_options& options);

} // namespace corral::cli
