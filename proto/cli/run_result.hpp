// What `corral run`'s paths (in-process, --connect, --nodes) share to end: a refusal and
// a finished result, each printed as the flags ask and turned into the exit status.
#pragma once

#include <nlohmann/json.hpp>

#include "actors/exec_result.hpp"
#include "config/failure.hpp"

namespace corral::cli {

// "corral: WHY" on stderr (and the JSON error on stdout with --json); 125 or the status
// the failure's kind maps to.
int refuse(const failure& f, bool json);

// The program's output and its ending line, or the whole result as JSON with `extra`'s
// members added; the program's exit status.
int print_result(const exec_result& result, bool json, nlohmann::json extra = nlohmann::json::object());

} // namespace corral::cli
