// A session's egress proxy in allowlist network mode (actors/egress/egress_proxy.hpp), the same one
// an execution has: spawned linked to the session when the child is launched, so it lives
// exactly as long as the session. The session is its live subscriber and passes each
// finished connection on to its owner (session_network); when the session ends, after the
// loop has released the child (which closes every proxied connection), it asks for the audit
// and puts it in session_ended.
#pragma once

#include <functional>
#include <optional>

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/exec_result.hpp"
#include "actors/execution.hpp"

namespace corral {

class io_loop;

class session_egress {
public:
  // Spawns the proxy if the plan is in allowlist mode; otherwise does nothing.
  void start(caf::event_based_actor* self, const execution_plan& plan, io_loop* io);

  // The proxy the loop asks for decisions (empty outside allowlist mode).
  const caf::actor& proxy() const { return proxy_; }

  // Calls `done` once the audit is in, bounded; at once when there is no proxy.
  void collect(caf::event_based_actor* self, std::function<void()> done);

  // The audit for session_ended: empty outside allowlist mode.
  std::optional<network_audit> take_audit() { return std::move(audit_); }

private:
  caf::actor proxy_;
  std::optional<network_audit> audit_;
};

} // namespace corral
