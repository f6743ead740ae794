// A client's sessions: session.open, .write, .resize and .close, and each session's events
// (output, stderr, refusals, network audit, its end) relayed as notifications under the
// id this connection gave it. An event that comes before the reply that opened its session
// is kept and replayed once the session has its id.
#pragma once

#include <optional>

#include "config/failure.hpp"
#include "proto/daemon/client_replies.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"

namespace corral {

void session_open(connection_self self, const rpc::request& r);
void session_write(connection_self self, const rpc::request& r);
void session_resize(connection_self self, const rpc::request& r);
void session_close(connection_self self, const rpc::request& r);

// Ends a session the way the connection's phase asks: after a stdio client's EOF a stdio
// session gets EOF too (it answers what it was sent, then ends); a stop cancels everything.
// (A workspace's terminal is detached from first: detach_terminals.)
void end_session(connection_self self, const client_session& s);

// Why this connection may open or attach no more sessions, if it may not.
std::optional<failure> no_session_slot(const client_connection_state& st);
// Gives session `number` this connection's next id ("s3") and routes its events to it.
client_session& add_session(connection_self self, std::uint64_t number, caf::actor actor, bool terminal);
// This connection's session named by params.session, or null after answering the error.
client_session* find_session(connection_self self, const rpc::request& r);
// This connection no longer hears session `number` (it ended, or was detached from).
void forget_session(connection_self self, std::uint64_t number);

void relay(connection_self self, session_message& m);
void relay(connection_self self, session_refused& r);
void relay(connection_self self, session_stderr& e);
void relay(connection_self self, session_gate& g);
void relay(connection_self self, terminal_output& o);
void relay(connection_self self, session_network& n);
void relay(connection_self self, session_ended& e);

} // namespace corral
