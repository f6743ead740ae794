// What a client connection's handlers (client_connection.cpp, client_sessions.cpp,
// workspace_methods.cpp) write back on its socket: responses and errors to calls, notifications, and the hang-up once
// every call asked before a stdio client's EOF or the daemon's stop has its answer.
#pragma once

#include <initializer_list>
#include <string>

#include <caf/stateful_actor.hpp>
#include <nlohmann/json.hpp>

#include "proto/daemon/client_connection.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"

namespace corral {

using connection_self = caf::stateful_actor<client_connection_state>*;

// One JSON-RPC line, queued to this connection's socket.
void write_line(connection_self self, std::string line);

void reply_error(connection_self self, int code, std::string message, const nlohmann::json& id,
                 nlohmann::json data = nullptr);

// The error answer for `f`: its code and kind from the failure's kind (rpc::error_from).
void reply_failure(connection_self self, const failure& f, const nlohmann::json& id);

void notify(connection_self self, const std::string& method, const nlohmann::json& params);

// A call counted in calls_pending has had its answer written: no longer in flight, and
// the connection was active.
void call_answered(connection_self self);

// False, having answered with the unknown member's name, when r has a param not in `allowed`.
bool only_params(connection_self self, const rpc::request& r, std::initializer_list<const char*> allowed);

// Whether anything asked of this connection is still unanswered or running: an exec, a
// workspace call, a session being opened or open.
bool has_work_in_flight(const client_connection_state& st);

// After a stdio client's EOF or when the daemon stops: once everything asked before has
// its answer, the loop closes the connection after writing what is queued.
void hang_up_when_answered(connection_self self);

} // namespace corral
