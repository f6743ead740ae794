#include "proto/daemon/client_connection.hpp"

#include "config/version.hpp"

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/execution_messages.hpp"
#include "proto/daemon/client_replies.hpp"
#include "proto/daemon/client_sessions.hpp"
#include "proto/daemon/terminal_attach.hpp"
#include "proto/daemon/exec_job.hpp"
#include "proto/daemon/socket_loop.hpp"
#include "proto/daemon/workspace_methods.hpp"
#include "proto/jsonrpc/exec_params.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"
#include "proto/jsonrpc/result_json.hpp"


namespace corral {

namespace {

using nlohmann::json;

// The supervisor answers stats at once unless it is wedged; a health check must not hang.
constexpr std::chrono::seconds kHealthBound{5};

bool no_params(connection_self self, const rpc::request& r) {
  if (r.params.empty()) return true;
  reply_error(self, rpc::kInvalidParams, r.method + " takes no parameters", r.id);
  return false;
}

void start_exec(connection_self self, const rpc::request& r) {
  auto& st = self->state;
  auto key = r.id.dump();
  if (!r.id.is_null() && st.jobs.count(key))
    return reply_error(self, rpc::kInvalidRequest, "id " + key + " is already in use by a running exec", r.id);
  if (st.jobs.size() >= st.info->max_execs_per_client)
    return reply_error(self, rpc::kLimitExceeded,
                       "at most " + std::to_string(st.info->max_execs_per_client) +
                           " executions may run at once on one connection",
                       r.id, {{"kind", to_string(failure_kind::limit_exceeded)}});
  auto params = exec_params_from_json(r.params);
  if (!params) return write_line(self, rpc::error_line(rpc::error_from(params.error(), r.id)));
  params->request.client = st.id;  // this connection's executions take turns with others'
  params->request.principal = connection_principal(self);  // whose workspaces it may run in
  auto job = self->spawn<caf::linked>(exec_job, caf::actor{self}, st.info->supervisor, std::move(*params), r.id, key);
  if (!r.id.is_null()) st.jobs[key] = job;
  ++st.jobs_running;
}

void cancel(connection_self self, const rpc::request& r) {
  auto target = r.params.find("id");
  if (r.params.size() != 1 || target == r.params.end() ||
      !(target->is_string() || target->is_number_integer() || target->is_number_unsigned()))
    return reply_error(self, rpc::kInvalidParams, "cancel takes {\"id\": <the exec call's id>}", r.id);
  // Only this connection's own jobs are reachable: another client's ids mean nothing here.
  auto it = self->state.jobs.find(target->dump());
  if (it == self->state.jobs.end())
    return reply_error(self, rpc::kInvalidParams, "no running exec with id " + target->dump() + " on this connection", r.id);
  self->send(it->second, job_cancel_atom::value);
  write_line(self, rpc::response_line(r.id, {{"cancelled", true}}));
}

void health(connection_self self, const rpc::request& r) {
  auto id = r.id;
  self->request(self->state.info->supervisor, kHealthBound, stats_atom::value)
      .then(
          [=](supervisor_stats& s) {
            auto& st = self->state;
            auto up = std::chrono::duration<double>(std::chrono::steady_clock::now() - st.info->started).count();
            write_line(self, rpc::response_line(
                            id, {{"status", "ok"},
                                 {"version", corral_version()},
                                 {"uptime_s", up},
                                 {"clients", st.info->loop->connections()},
                                 {"executions", {{"running", s.running}, {"queued", s.queued}, {"completed", s.completed}}},
                                 {"this_client", {{"executions", st.jobs.size()}, {"sessions", st.sessions.size()}}}}));
          },
          [=](caf::error&) { reply_error(self, rpc::kTimeout, "the supervisor did not answer within 5 s", id); });
}


void dispatch(connection_self self, const rpc::request& r) {
  auto& info = *self->state.info;
  if (r.method == "exec") return start_exec(self, r);
  if (r.method == "cancel") return cancel(self, r);
  if (r.method == "health") {
    if (no_params(self, r)) health(self, r);
    return;
  }
  if (r.method == "capabilities") {
    if (no_params(self, r)) write_line(self, rpc::response_line(r.id, info.capabilities));
    return;
  }
  if (r.method == "describe") {
    if (no_params(self, r)) write_line(self, rpc::response_line(r.id, info.descriptor));
    return;
  }
  if (r.method == "session.open") return session_open(self, r);
  if (r.method == "session.write") return session_write(self, r);
  if (r.method == "session.resize") return session_resize(self, r);
  if (r.method == "session.close") return session_close(self, r);
  if (r.method == "session.detach") return session_detach(self, r);
  if (workspace_method(self, r)) return;
  reply_error(self, rpc::kMethodNotFound, "unknown method \"" + r.method + "\"", r.id);
}

} // namespace

caf::behavior client_connection(connection_self self, connection_id id, peer_credentials peer,
                                std::shared_ptr<const daemon_info> info) {
  self->state.id = id;
  self->state.peer = peer;
  self->state.info = std::move(info);
  self->state.last_activity = std::chrono::steady_clock::now();
  if (self->state.info->idle_timeout.count() > 0) self->delayed_send(self, self->state.info->idle_timeout, idle_atom::value);
  return {
      [=](idle_atom) {
        auto& st = self->state;
        if (st.phase != connection_phase::open) return;
        auto idle = st.info->idle_timeout;
        bool busy = has_work_in_flight(st);
        auto quiet = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - st.last_activity);
        if (busy || quiet < idle) return (void)self->delayed_send(self, busy ? idle : idle - quiet, idle_atom::value);
        st.info->loop->close(st.id, "idle for " + std::to_string(idle.count()) + " ms with nothing in flight");
      },
      [=](conn_line& line) {
        self->state.last_activity = std::chrono::steady_clock::now();
        if (line.text.find_first_not_of(" \t\r") == std::string::npos) return;  // blank lines are keep-alives
        auto parsed = rpc::parse_request(line.text);
        if (auto* e = std::get_if<rpc::error>(&parsed)) return write_line(self, rpc::error_line(*e));
        auto& r = std::get<rpc::request>(parsed);
        // JSON-RPC forbids answering a notification, and a call without an id could
        // never be matched to its answer or cancelled: so it is not run at all.
        if (r.notification) return;
        dispatch(self, r);
      },
      [=](conn_oversized& o) {
        reply_error(self, rpc::kLimitExceeded, "the line is longer than " + std::to_string(o.limit) + " bytes and was skipped",
                    nullptr, {{"kind", to_string(failure_kind::limit_exceeded)}});
      },
      [=](rpc_out_atom, std::string& line) { write_line(self, std::move(line)); },
      [=](rpc_out_atom, std::string& line, const caf::actor& ack_to, std::uint64_t bytes) {
        write_line(self, std::move(line));
        self->send(ack_to, ack_atom::value, bytes);  // queued to the socket: the stream may go on
      },
      [=](job_done_atom, const std::string& key, std::string& line) {
        auto& st = self->state;
        // Stopping: this call was answered with kStopping already.
        if (st.phase == connection_phase::stopping) return;
        st.jobs.erase(key);
        if (st.jobs_running > 0) --st.jobs_running;
        st.last_activity = std::chrono::steady_clock::now();
        write_line(self, std::move(line));
        hang_up_when_answered(self);
      },
      [=](conn_input_ended&) {
        auto& st = self->state;
        if (st.phase != connection_phase::open) return;
        st.phase = connection_phase::input_ended;
        detach_terminals(self);
        for (auto& [number, s] : st.sessions) end_session(self, s);
        hang_up_when_answered(self);
      },
      [=](conn_stopping&) {
        auto& st = self->state;
        if (st.phase == connection_phase::stopping || st.phase == connection_phase::closed) return;
        st.phase = connection_phase::stopping;
        // Each call in flight is answered now; its execution ends with its grace as the
        // job goes (the runtime's stop then finishes every lease).
        for (auto& [key, job] : st.jobs) {
          reply_error(self, rpc::kStopping, "the daemon is stopping; the execution was terminated",
                      json::parse(key), {{"kind", "stopping"}});
          self->send(job, job_cancel_atom::value);  // its own answer is dropped
        }
        st.jobs.clear();
        st.jobs_running = 0;
        for (auto& [number, s] : st.sessions) end_session(self, s);
        hang_up_when_answered(self);
      },
      [=](session_message& m) { relay(self, m); },
      [=](session_refused& r) { relay(self, r); },
      [=](session_stderr& e) { relay(self, e); },
      [=](session_gate& g) { relay(self, g); },
      [=](terminal_output& o) { relay(self, o); },
      [=](session_network& n) { relay(self, n); },
      [=](session_ended& e) { relay(self, e); },
      [=](terminal_demoted& d) { relay(self, d); },
      [=](conn_closed&) {
        // Linked jobs exit with us; each execution sees its caller go and cancels. Sessions
        // are cancelled outright: a terminal does not otherwise notice its client leave. A
        // workspace's terminals are the workspace's: they are only left.
        detach_terminals(self);
        for (auto& [number, s] : self->state.sessions) self->send(s.actor, cancel_atom::value);
        self->state.sessions.clear();
        self->state.session_ids.clear();
        self->state.phase = connection_phase::closed;
        if (self->state.opening > 0) {
          // Linked jobs must still go now; sessions being opened are cancelled as their
          // replies come in (a terminal has no owner that could notice).
          for (auto& [key, job] : self->state.jobs) self->send_exit(job, caf::exit_reason::user_shutdown);
          self->state.jobs.clear();
          return;
        }
        self->quit(caf::exit_reason::user_shutdown);
      },
  };
}

} // namespace corral
