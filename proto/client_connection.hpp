// One client of the daemon: parses its lines, answers its calls, and owns its exec jobs.
// Everything a client can name (request ids, executions) lives in this actor's state, so
// one client can neither see nor cancel another's work. When the client goes
// (conn_closed), the actor quits and its linked jobs go with it: their executions are
// cancelled and their leases finished.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/stateful_actor.hpp>
#include <nlohmann/json.hpp>

#include "proto/daemon_messages.hpp"
#include "proto/peer_credentials.hpp"

namespace corral {

class socket_loop;

// What every connection answers from, computed once when the daemon starts.
struct daemon_info {
  caf::actor supervisor;
  socket_loop* loop = nullptr;
  nlohmann::json capabilities;
  nlohmann::json descriptor;
  std::chrono::steady_clock::time_point started;
  std::size_t max_execs_per_client = 64;
};

struct client_connection_state {
  connection_id id = 0;
  peer_credentials peer;
  std::shared_ptr<const daemon_info> info;
  std::map<std::string, caf::actor> jobs;  // by the request id's JSON text
};

caf::behavior client_connection(caf::stateful_actor<client_connection_state>* self, connection_id id,
                                peer_credentials peer, std::shared_ptr<const daemon_info> info);

} // namespace corral
