// The state an execution actor carries (see execution.hpp for the machine).
#pragma once

#include <chrono>
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

struct execution_state {
  execution_plan plan;
  execution_env env;
  execution_phase phase = execution_phase::idle;
  caf::typed_response_promise<exec_outcome> reply;
  caf::actor lease;
  lease_grant grant;
  // A jail armed ahead (its lease is `lease`); unset for a cold start.
  std::optional<warm_jail> warm;
  std::chrono::steady_clock::time_point started;
  // When the phase being timed began: the lease request, a step's spawn order, the finish.
  std::chrono::steady_clock::time_point phase_began;

  // The current step.
  std::size_t step = 0;
  process_id process = 0;
  bool helper_reaped = false;
  // The result is out; the lease is finished once the helper has exited (or after a bound).
  bool finish_after_helper = false;
  bool lease_finish_sent = false;
  std::optional<captured_stream> out, err;
  std::optional<status_line> target_exit;  // the helper's `exited` line
  std::optional<status_line> start_failure;  // the helper's `failed` line
  int helper_wait_status = 0;

  // What ended it, when corral did.
  bool timed_out = false;
  bool cancelled = false;

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
