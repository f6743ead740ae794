// What `corral run`'s paths (in-process, --nodes) share to end: a finished result,
// printed as the flags ask and turned into the exit status. A refusal is ending.hpp's
// `refuse`, which the daemon's path shares too.
#pragma once

#include <nlohmann/json.hpp>

#include "actors/exec_result.hpp"
#include "proto/cli/ending.hpp"

namespace corral::cli {

// The program's output and its ending line, or the whole result as JSON with `extra`'s
// members added; the program's exit status.
int print_result(const exec_result& result, bool json, nlohmann::json extra = nlohmann::json::object());

} // namespace corral::cli
