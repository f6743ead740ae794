// One client of the daemon: parses its lines, answers its calls, and owns its exec jobs
// and its sessions (stdio sessions name this actor their owner; terminal sessions are
// attached to it). A disconnect cancels both, but for a workspace's terminals, which it
// only detaches from. The session calls and the relay of session
// events are in client_sessions.hpp; what every handler writes back, client_replies.hpp.
// Everything a client can name (request ids, executions) lives in this actor's state, so
// one client can neither see nor cancel another's work. When the client goes
// (conn_closed), the actor quits and its linked jobs go with it: their executions are
// cancelled and their leases finished.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <caf/actor.hpp>
#include <caf/stateful_actor.hpp>
#include <nlohmann/json.hpp>

#include "actors/sessions/session_messages.hpp"
#include "proto/daemon/daemon_messages.hpp"
#include "proto/daemon/exec_job.hpp"
#include "proto/daemon/peer_credentials.hpp"

namespace corral {

class socket_loop;

// What every connection answers from, computed once when the daemon starts.
struct daemon_info {
  caf::actor supervisor;
  caf::actor workspaces;  // the runtime's workspace registry (proto/daemon/workspace_methods.hpp)
  socket_loop* loop = nullptr;
  nlohmann::json capabilities;
  nlohmann::json descriptor;
  std::chrono::steady_clock::time_point started;
  std::size_t max_execs_per_client = 64;
  // A connection with nothing in flight and no line for this long is closed, so idle
  // clients cannot hold every connection slot. Zero: never.
  std::chrono::milliseconds idle_timeout{300'000};
};

// One session this client opened. Its id ("s1", "s2", ...) means something only on this
// connection; the runtime's number routes the session's messages back to it.
struct client_session {
  std::string id;
  bool terminal = false;
  // A workspace's terminal: this connection views it (and writes, when `writer`); leaving
  // detaches, it does not end it (proto/daemon/terminal_attach.hpp).
  bool resident = false;
  bool writer = true;
  caf::actor actor;
  utf8_carry carry;         // terminal output arrives in arbitrary chunks
  utf8_carry stderr_carry;  // so does a stdio child's forwarded stderr
};

// What a session said before the reply that opened it was handled (its number unknown yet).
using early_session_event =
    std::variant<session_message, session_refused, session_stderr, session_gate, terminal_output, session_network,
                 session_ended>;

// open ──EOF on a stdio client──▶ input_ended ──all answered──▶ (asks the loop to close)
// open / input_ended ──the daemon stops──▶ stopping ──sessions ended──▶ (asks to close)
// any ──conn_closed──▶ closed (quits once no session.open is outstanding)
enum class connection_phase : std::uint8_t {
  open,         // reading requests
  input_ended,  // a stdio client's EOF: what came before it is answered, then the hang-up
  stopping,     // the daemon stops: calls in flight got kStopping; sessions are cancelled
  closed,       // the client is gone
};

struct client_connection_state {
  connection_id id = 0;
  peer_credentials peer;
  std::shared_ptr<const daemon_info> info;
  std::map<std::string, caf::actor> jobs;  // by the request id's JSON text
  std::map<std::uint64_t, client_session> sessions;  // by the runtime's session number
  std::map<std::string, std::uint64_t> session_ids;  // this connection's id -> number
  std::map<std::uint64_t, std::vector<early_session_event>> early;
  std::size_t opening = 0;  // session.open calls not answered yet
  std::size_t jobs_running = 0;  // every exec not answered yet, with a null id or not
  std::size_t calls_pending = 0;  // workspace calls not answered yet
  std::uint64_t next_session = 1;
  connection_phase phase = connection_phase::open;
  std::chrono::steady_clock::time_point last_activity;  // a line read or a call answered
};

caf::behavior client_connection(caf::stateful_actor<client_connection_state>* self, connection_id id,
                                peer_credentials peer, std::shared_ptr<const daemon_info> info);

} // namespace corral
