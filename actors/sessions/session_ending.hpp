// Why a session ended, decided once by the rule of its kind. The first reason given stands,
// except that a stdio session lets a failed start outrank an earlier close, idle, lifetime
// or cancel while the child's exit is unknown: the end of a child that never ran must not
// read as success. A terminal keeps the first reason always.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "actors/sessions/session_state.hpp"

namespace corral {

enum class end_rule : std::uint8_t { first_wins, failed_start_outranks };

class session_ending {
public:
  explicit session_ending(end_rule rule) : rule_(rule) {}

  // `child_exit_known`: the helper reported the program's exit.
  void offer(session_end_reason r, std::string detail, bool child_exit_known) {
    bool outranks = rule_ == end_rule::failed_start_outranks && r == session_end_reason::failed && reason_ &&
                    *reason_ != session_end_reason::failed && !child_exit_known;
    if (reason_ && !outranks) return;
    reason_ = r;
    detail_ = std::move(detail);
  }

  bool decided() const { return reason_.has_value(); }
  // Undecided at the end means nobody ended it: the child exited.
  session_end_reason reason() const { return reason_.value_or(session_end_reason::exited); }
  const std::string& detail() const { return detail_; }

private:
  end_rule rule_;
  std::optional<session_end_reason> reason_;
  std::string detail_;
};

} // namespace corral
