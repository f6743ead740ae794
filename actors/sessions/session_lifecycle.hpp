// One session's child from lease to end report, written once for the stdio and the
// terminal session; each kind specialises it through session_kind.
//
//   lease:  acquiring ──ok──▶ granted ──terminate──▶ terminating
//              └──refused, or no answer within kLeaseBound──▶ failed
//           (any) ──the lease actor died──▶ lost (SIGKILL to the helper's group)
//   child:  not_launched ──launch──▶ spawning ──io_spawned──▶ running ──io_exited──▶ reaped
//                 ▲─────launch or spawn failed─────┘
//   end:    open ──child reaped with its streams at EOF, or never launched──▶ collecting
//           the egress audit ──▶ finishing the lease ──▶ session_ended to the kind's peer,
//           scratch dir removed, the actor quits
//
// Deadlines: startup (failed while still starting), lifetime (from the start), kEofBound on
// the streams after the helper is reaped (a descendant may hold them open), kLeaseBound on
// every lease answer. The session's phase (actors/sessions/session_state.hpp) is kept here;
// the kinds move it only where their own input decides (a stdio session's graceful close).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/system_messages.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/message_handler.hpp>

#include "actors/execution.hpp"
#include "actors/io/io_events.hpp"
#include "actors/leases/lease_messages.hpp"
#include "actors/sessions/session_egress.hpp"
#include "actors/sessions/session_ending.hpp"
#include "actors/launch/child_launcher.hpp"
#include "actors/sessions/session_env.hpp"
#include "actors/sessions/session_messages.hpp"

namespace corral {

// The stream routes and the pty a kind's child is launched with.
struct session_streams {
  output_route out;
  output_route err;
  pty_options pty;
};

// What a session kind decides inside the shared lifecycle.
class session_kind {
public:
  // Who hears the session: the network records as they come, then session_ended. Empty:
  // nobody (a terminal without viewers, a stdio session whose owner is gone).
  virtual std::vector<caf::actor> peers() const = 0;
  // The stream routes (and pty) the child is launched with.
  virtual session_streams streams() = 0;
  // io_spawned, after the input queued before it was written.
  virtual void on_spawned() = 0;
  // The session is ended at once (cancel, lifetime, a failure) or its child exited.
  virtual void on_ending() {}
  virtual void on_child_exited() {}
  // Everything is in; the egress audit and the lease are next.
  virtual void on_finishing() {}
  // At kEofBound after the helper was reaped: how much longer the output may take (still
  // flowing), or nothing to close the streams now.
  virtual std::optional<std::chrono::milliseconds> eof_wait_more() { return std::nullopt; }
  virtual void fill_end(session_ended& end, const lease_report& report) = 0;
  virtual void fill_info(session_info& info) const = 0;

protected:
  ~session_kind() = default;
};

// What differs between the kinds before any hook runs: the noun in reasons and logs, the
// end rule.
enum class session_type : std::uint8_t { stdio, terminal };

enum class lease_state : std::uint8_t { acquiring, granted, failed, terminating, lost };
enum class child_state : std::uint8_t { not_launched, spawning, running, reaped };
enum class end_step : std::uint8_t { open, collecting_audit, finishing_lease };

class session_lifecycle {
public:
  session_lifecycle(caf::event_based_actor* self, session_kind& kind, session_type type);

  // Acquires the lease and arms the deadlines; the child is launched once the lease is
  // granted, while the phase is still starting. `streams` are the ones the kind reads to
  // EOF before the end (a terminal: stdout only, the pty carries both).
  void start(execution_plan exec, std::uint64_t number, session_env env, std::chrono::milliseconds startup,
             std::chrono::milliseconds lifetime, bool reads_stderr);

  // io_spawned, io_spawn_failed, io_status, io_eof, io_exited, eof_wait, network_event,
  // cancel, lifetime, startup, info.
  caf::message_handler handlers();
  // True when `down` was the lease's.
  bool handle_down(const caf::down_msg& down);

  // Ends the session now: terminates a launched child through the lease, or finishes at
  // once when nothing was launched and the lease has answered.
  void end_now(session_end_reason why, std::string detail);
  void terminate();
  void offer_reason(session_end_reason why, std::string detail = {});
  // Written at once once spawned; before, queued in order and flushed at io_spawned.
  void write_input(std::string bytes);

  session_phase phase() const { return phase_; }
  void begin_draining() {
    if (phase_ != session_phase::closed) phase_ = session_phase::draining;
  }
  bool reason_decided() const { return ending_.decided(); }
  bool spawned() const { return child_ == child_state::running || child_ == child_state::reaped; }
  bool launched() const { return child_ != child_state::not_launched; }
  bool at_eof(stream_kind s) const { return (s == stream_kind::out ? out_eof_ : err_eof_); }
  bool ending_started() const { return end_ != end_step::open; }
  process_id process() const { return process_; }
  io_loop& io() const { return env_.launcher->io(); }
  const execution_plan& plan() const { return exec_; }
  std::uint64_t number() const { return number_; }

private:
  void lease_failed(std::string why);
  void lease_granted(const lease_grant& grant);
  void launch();
  bool streams_done() const { return out_eof_ && (!reads_stderr_ || err_eof_); }
  void maybe_finish();
  void finish_lease();
  void report_end(const lease_report& report);

  caf::event_based_actor* self_;
  session_kind& kind_;
  session_type type_;
  session_ending ending_;
  execution_plan exec_;
  std::uint64_t number_ = 0;
  session_env env_;
  std::chrono::milliseconds startup_{0};
  bool reads_stderr_ = true;

  session_phase phase_ = session_phase::starting;
  lease_state lease_state_ = lease_state::acquiring;
  child_state child_ = child_state::not_launched;
  end_step end_ = end_step::open;

  caf::actor lease_;
  lease_grant grant_;
  process_id process_ = 0;
  long pid_ = 0;
  std::string isolation_;
  std::deque<std::string> before_spawn_;
  bool out_eof_ = false;
  bool err_eof_ = false;
  std::optional<status_line> target_exit_;
  int helper_wait_status_ = 0;
  session_egress egress_;
};

} // namespace corral
