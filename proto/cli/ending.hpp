// How a CLI command ends: its exit status (the program's own, or timeout(1)'s codes for
// corral's endings) and the one line on stderr that says why when corral ended it.
//
//   124 timed out   125 corral failed or refused   126 found but not executable
//   127 not found   128+N signal N (the program's, or corral's own: 130 INT, 143 TERM, 129 HUP)
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "actors/exec_result.hpp"
#include "actors/sessions/session_messages.hpp"
#include "config/failure.hpp"
#include "config/limits.hpp"

namespace corral::cli {

inline constexpr int kExitNotExecutable = 126;

// A failure's status: 126 and 127 for a program that could not be executed or found.
int failure_status(const failure& f);

// "corral: WHY" on stderr (and the JSON error on stdout with --json); 125 or the status
// the failure's kind maps to (failure_status).
int refuse(const failure& f, bool json);

// The result's status: 124 on timeout, 128+N for a signal, else the exit code.
int result_status(const exec_result& r);

// "corral: …" when corral (a limit, the timeout) or a signal ended the program, or its
// compile step failed; empty when the program ended by itself. `effective` names the limits
// (null: not known here, as for a daemon's execution).
std::string ending_line(const exec_result& r, const limits* effective);

// The parts of a result JSON (proto/jsonrpc/result_json.hpp) that ending_line and result_status read.
exec_result ending_of(const nlohmann::json& result);

// For a program that failed after its stderr said "No space left on device" or "File too
// large": the bounds it most likely met. A hint read from the program's own words (corral
// cannot see a failed write inside the jail), so it names the bounds, not a certainty.
std::string full_filesystem_line(const limits& effective);
bool mentions_full_filesystem(std::string_view stderr_piece);

// "corral: stdout truncated at N bytes; M bytes dropped …" for each truncated stream; empty
// when nothing was dropped. Text mode only: --json carries the flags and counts.
std::string truncation_lines(const exec_result& r, std::uint64_t cap);

// A session's status once it ended: 124 at its lifetime, 128+N for signal N, else its exit
// code; 125 when it failed (its detail is said by the caller).
int session_status(const session_ended& e);

// The line for a session (`what`: "server", "terminal") that a deadline or a signal ended;
// empty when it exited by itself, was closed or cancelled, or failed (said elsewhere).
std::string session_ending_line(const session_ended& e, const char* what, std::chrono::milliseconds lifetime,
                                std::chrono::milliseconds idle);

// The name of signal `sig` ("SIGKILL"), or "signal N".
std::string signal_name(int sig);

} // namespace corral::cli
