// How a child's end is read, the same way for executions and sessions: the exit code or
// the signal from a wait status, and how long its pipes may stay open after it is reaped.
#pragma once

#include <chrono>
#include <optional>
#include <sys/wait.h>

#include "tiers/jail/status_line.hpp"

namespace corral {

// After the helper exits, a descendant that escaped the kill (only possible when the helper
// itself was SIGKILLed) may hold a pipe open; the streams are closed after this.
inline constexpr std::chrono::milliseconds kEofBound{2000};

// At most one is set: a stopped or continued status sets neither.
struct child_ending {
  std::optional<int> exit_code;
  std::optional<int> term_signal;
};

inline child_ending decode_wait_status(int wait_status) {
  child_ending e;
  if (WIFEXITED(wait_status)) e.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) e.term_signal = WTERMSIG(wait_status);
  return e;
}

// The program's end as a result reports it: from the helper's `exited` line when it sent
// one; otherwise, when the helper itself was killed (the last-resort SIGKILL of its group),
// that signal. `helper_wait_status` is empty while the helper has not been reaped.
inline child_ending program_ending(const std::optional<status_line>& target_exit,
                                   std::optional<int> helper_wait_status) {
  if (target_exit) return decode_wait_status(target_exit->wait_status);
  child_ending e;
  if (helper_wait_status) e.term_signal = decode_wait_status(*helper_wait_status).term_signal;
  return e;
}

} // namespace corral
