// The egress_proxy actor: one per execution in allowlist network mode, its lifetime the
// execution's (linked). It owns every decision for the execution's proxied connections
// (config/egress_decision.hpp: deny, then allow, then each resolved address) and the audit
// of them; the I/O loop's relay (actors/egress/egress_relay.hpp) owns the sockets and asks it.
//
// Messages: egress_ask (from the loop) → io_loop::egress_answer; egress_closed (from the
// loop) completes an event; (audit_atom) → network_audit, answered once every connection
// the actor let through has reported its end, or after kAuditBound with those marked
// "open when the execution ended". Each finished event also goes to `live` (the request's
// live_output subscriber) as a network_event, so a daemon can stream it.
#pragma once

#include <chrono>
#include <optional>
#include <unordered_map>

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/egress/egress_messages.hpp"
#include "actors/io/io_loop.hpp"

namespace corral {

// A connection the actor has let through (or is deciding), until the loop reports its end.
struct egress_open_event {
  network_event event;
  std::chrono::steady_clock::time_point began;
};

struct egress_proxy_state {
  egress_lists lists;
  io_loop* io = nullptr;
  caf::actor live;
  std::unordered_map<connection_id, egress_open_event> open;
  network_audit audit;
  std::optional<caf::typed_response_promise<network_audit>> waiting;
};

caf::behavior egress_proxy(caf::stateful_actor<egress_proxy_state>* self, egress_lists lists, io_loop* io,
                           caf::actor live);

} // namespace corral
