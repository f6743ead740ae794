// The state an execution actor carries (see execution.hpp for the machine).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include <caf/actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/execution_messages.hpp"

#include "actors/exec_result.hpp"
#include "actors/execution.hpp"
#include "actors/io/io_events.hpp"
#include "actors/warm/warm_pool.hpp"

namespace corral {

enum class execution_phase { idle, leasing, launching, running, finishing, done };

// The current step's exec helper: launched (or being launched), then reaped by the loop.
enum class helper_state : std::uint8_t { running, reaped };

// After the result: the lease is finished once the helper has exited (or after a bound).
enum class end_state : std::uint8_t {
  open,             // no result yet
  result_out,       // delivered before the helper's exit; the lease waits for it
  lease_finishing,  // finish sent to the lease; the actor ends with its answer
};

// What ended the execution. A timeout and a cancel can both happen (in either order);
// the verdict says timed_out then.
enum class ending_cause : std::uint8_t { none, completed, timed_out, cancelled, timed_out_and_cancelled };

inline bool timed_out(ending_cause c) {
  return c == ending_cause::timed_out || c == ending_cause::timed_out_and_cancelled;
}
inline bool cancelled(ending_cause c) {
  return c == ending_cause::cancelled || c == ending_cause::timed_out_and_cancelled;
}
inline bool ended_by_corral(ending_cause c) { return timed_out(c) || cancelled(c); }
inline ending_cause with_timeout(ending_cause c) {
  return cancelled(c) ? ending_cause::timed_out_and_cancelled : ending_cause::timed_out;
}
inline ending_cause with_cancel(ending_cause c) {
  return timed_out(c) ? ending_cause::timed_out_and_cancelled : ending_cause::cancelled;
}

// A warm jail's part in the execution.
enum class warm_state : std::uint8_t {
  cold,      // none taken: every step is launched cold
  taken,     // taken from the pool, not yet handed its step: retired if the execution ends
  launched,  // handed its step: the execution's own child now
  retired,   // ended unlaunched
};

struct execution_state {
  execution_plan plan;
  execution_env env;
  execution_phase phase = execution_phase::idle;
  caf::typed_response_promise<exec_outcome> reply;
  caf::actor lease;
  lease_grant grant;
  // A jail armed ahead (its lease is `lease`); unset for a cold start.
  std::optional<warm_jail> warm;
  warm_state warmth = warm_state::cold;
  std::chrono::steady_clock::time_point started;
  // When the phase being timed began: the lease request, a step's spawn order, the finish.
  std::chrono::steady_clock::time_point phase_began;

  // The current step.
  std::size_t step = 0;
  process_id process = 0;
  helper_state helper = helper_state::running;
  end_state ending = end_state::open;
  std::optional<captured_stream> out, err;
  std::optional<status_line> target_exit;  // the helper's `exited` line
  std::optional<status_line> start_failure;  // the helper's `failed` line
  int helper_wait_status = 0;

  ending_cause cause = ending_cause::none;

  // Allowlist network mode: the execution's egress_proxy (linked) and, once asked at the
  // end, its audit for the result.
  caf::actor egress;
  std::optional<network_audit> network;

  std::vector<std::string> not_enforced;
  std::string isolation;
  std::vector<std::string> masked;  // protected paths the view covered (the tier's plan)
  // Where the time went: the runtime's own phases (lease, spawn, lease_finish) around the
  // helper's setup steps, as reported.
  std::vector<setup_step> steps;
  resource_usage usage;
};

} // namespace corral
