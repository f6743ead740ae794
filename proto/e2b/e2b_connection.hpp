// One HTTP connection to the E2B gateway. It answers its requests in order (HTTP/1.1):
// each goes to the gateway; a unary answer is written whole; a stream call (a process's
// Start or Connect) becomes a Connect stream of the process's events, written as they
// come with keepalive pings between, and acknowledged to the process only while little is
// unwritten, so a client that stops reading slows the process instead of growing the
// daemon. A client gone mid-stream leaves the process running.
//
//   idle ──request──▶ answering ──answer──▶ idle (next request)
//   idle ──stream call──▶ streaming ──end frame──▶ idle
//   any ──http_closed──▶ (quits)
#pragma once

#include <cstdint>
#include <memory>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "proto/http/http_loop.hpp"

namespace corral {

caf::actor spawn_e2b_connection(caf::actor_system& system, std::shared_ptr<http_loop> loop, std::uint64_t id,
                                caf::actor gateway);

} // namespace corral
