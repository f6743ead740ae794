// `run`, `mcp` and `shell` without --connect: a runtime in this process for one request.
#pragma once

#include <memory>

#include "actors/runtime.hpp"
#include "config/failure.hpp"
#include "proto/cli/command_flags.hpp"

namespace corral::cli {

// Blocks the interrupt signals first (before the runtime's threads exist, so they inherit
// the mask: interrupt_watch.hpp), loads the profile as the flags say (--config or
// ./corral.toml, the grants, --allow-net) and starts the runtime with --allow-host as
// given and no warm jail (one request: a jail armed ahead would only compete with it).
expected<std::unique_ptr<runtime>> start_local_runtime(const command_flags& f);

// Ends a one-shot command: the runtime stops what it started and releases its state dir
// (runtime::stop_before_exit), stdout and stderr are flushed, and the process exits with
// `status` without joining the runtime's threads.
[[noreturn]] void exit_after(runtime& rt, int status);

} // namespace corral::cli
