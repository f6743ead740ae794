// The commands the lean program does not serve itself run in corral-local.so: every command
// of proto/cli/cli_main.cpp with the in-process runtime (CAF, toml++, libuv, spdlog), opened
// here only when one is asked for.
#pragma once

namespace corral::cli {

// Opens corral-local.so (beside this program, or in libexec/corral) and runs the command
// line there; 125 with what to do when it is missing or cannot be opened.
int run_local_commands(int argc, char** argv);

} // namespace corral::cli
