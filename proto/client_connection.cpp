#include "proto/client_connection.hpp"

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/execution_messages.hpp"
#include "proto/exec_job.hpp"
#include "proto/jsonrpc.hpp"
#include "proto/socket_loop.hpp"

#ifndef CORRAL_VERSION
#define CORRAL_VERSION "0.0.0"
#endif

namespace corral {

namespace {

using nlohmann::json;
using self_ptr = caf::stateful_actor<client_connection_state>*;

// The supervisor answers stats at once unless it is wedged; a health check must not hang.
constexpr std::chrono::seconds kHealthBound{5};

void write(self_ptr self, std::string line) { self->state.info->loop->write(self->state.id, std::move(line)); }

void reply_error(self_ptr self, int code, std::string message, const json& id, json data = nullptr) {
  write(self, rpc::error_line(rpc::error{code, std::move(message), id, std::move(data)}));
}

bool no_params(self_ptr self, const rpc::request& r) {
  if (r.params.empty()) return true;
  reply_error(self, rpc::kInvalidParams, r.method + " takes no parameters", r.id);
  return false;
}

void start_exec(self_ptr self, const rpc::request& r) {
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
  if (!params) return write(self, rpc::error_line(rpc::error_from(params.error(), r.id)));
  auto job = self->spawn<caf::linked>(exec_job, caf::actor{self}, st.info->supervisor, std::move(*params), r.id, key);
  if (!r.id.is_null()) st.jobs[key] = job;
}

void cancel(self_ptr self, const rpc::request& r) {
  auto target = r.params.find("id");
  if (r.params.size() != 1 || target == r.params.end() ||
      !(target->is_string() || target->is_number_integer() || target->is_number_unsigned()))
    return reply_error(self, rpc::kInvalidParams, "cancel takes {\"id\": <the exec call's id>}", r.id);
  // Only this connection's own jobs are reachable: another client's ids mean nothing here.
  auto it = self->state.jobs.find(target->dump());
  if (it == self->state.jobs.end())
    return reply_error(self, rpc::kInvalidParams, "no running exec with id " + target->dump() + " on this connection", r.id);
  self->send(it->second, job_cancel_atom::value);
  write(self, rpc::response_line(r.id, {{"cancelled", true}}));
}

void health(self_ptr self, const rpc::request& r) {
  auto id = r.id;
  self->request(self->state.info->supervisor, kHealthBound, stats_atom::value)
      .then(
          [=](supervisor_stats& s) {
            auto& st = self->state;
            auto up = std::chrono::duration<double>(std::chrono::steady_clock::now() - st.info->started).count();
            write(self, rpc::response_line(
                            id, {{"status", "ok"},
                                 {"version", CORRAL_VERSION},
                                 {"uptime_s", up},
                                 {"clients", st.info->loop->connections()},
                                 {"executions", {{"running", s.running}, {"queued", s.queued}, {"completed", s.completed}}},
                                 {"this_client", {{"executions", st.jobs.size()}}}}));
          },
          [=](caf::error&) { reply_error(self, rpc::kTimeout, "the supervisor did not answer within 5 s", id); });
}

void dispatch(self_ptr self, const rpc::request& r) {
  auto& info = *self->state.info;
  if (r.method == "exec") return start_exec(self, r);
  if (r.method == "cancel") return cancel(self, r);
  if (r.method == "health") {
    if (no_params(self, r)) health(self, r);
    return;
  }
  if (r.method == "capabilities") {
    if (no_params(self, r)) write(self, rpc::response_line(r.id, info.capabilities));
    return;
  }
  if (r.method == "describe") {
    if (no_params(self, r)) write(self, rpc::response_line(r.id, info.descriptor));
    return;
  }
  if (r.method.rfind("session.", 0) == 0)
    return reply_error(self, rpc::kMethodNotFound, "sessions are not available in this build of the daemon (" + r.method + "; the runtime has them, the daemon does not serve them yet)", r.id,
                       {{"reason", "sessions_unavailable"}});
  reply_error(self, rpc::kMethodNotFound, "unknown method \"" + r.method + "\"", r.id);
}

} // namespace

caf::behavior client_connection(self_ptr self, connection_id id, peer_credentials peer,
                                std::shared_ptr<const daemon_info> info) {
  self->state.id = id;
  self->state.peer = peer;
  self->state.info = std::move(info);
  return {
      [=](conn_line& line) {
        if (line.text.find_first_not_of(" \t\r") == std::string::npos) return;  // blank lines are keep-alives
        auto parsed = rpc::parse_request(line.text);
        if (auto* e = std::get_if<rpc::error>(&parsed)) return write(self, rpc::error_line(*e));
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
      [=](rpc_out_atom, std::string& line) { write(self, std::move(line)); },
      [=](job_done_atom, const std::string& key, std::string& line) {
        self->state.jobs.erase(key);
        write(self, std::move(line));
      },
      [=](conn_closed&) {
        // Linked jobs exit with us; each execution sees its caller go and cancels.
        self->quit(caf::exit_reason::user_shutdown);
      },
  };
}

} // namespace corral
