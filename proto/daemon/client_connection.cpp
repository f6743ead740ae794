#include "proto/daemon/client_connection.hpp"

#include <cmath>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/execution_messages.hpp"
#include "proto/daemon/exec_job.hpp"
#include "proto/jsonrpc/exec_params.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"
#include "proto/jsonrpc/result_json.hpp"
#include "proto/daemon/socket_loop.hpp"

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
  params->request.client = st.id;  // this connection's executions take turns with others'
  auto job = self->spawn<caf::linked>(exec_job, caf::actor{self}, st.info->supervisor, std::move(*params), r.id, key);
  if (!r.id.is_null()) st.jobs[key] = job;
  ++st.jobs_running;
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
                                 {"this_client", {{"executions", st.jobs.size()}, {"sessions", st.sessions.size()}}}}));
          },
          [=](caf::error&) { reply_error(self, rpc::kTimeout, "the supervisor did not answer within 5 s", id); });
}


// ---- sessions -------------------------------------------------------------------------

failure bad_param(const std::string& name, const std::string& what) {
  return make_failure(failure_kind::invalid_request, "\"" + name + "\" must be " + what);
}

expected<std::uint64_t> positive(const json& v, const std::string& name, std::uint64_t max = UINT64_MAX) {
  if ((v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() > 0)) && v.get<std::uint64_t>() > 0 &&
      v.get<std::uint64_t>() <= max)
    return v.get<std::uint64_t>();
  return bad_param(name, max == UINT64_MAX ? "a positive integer" : "an integer from 1 to " + std::to_string(max));
}

expected<std::chrono::milliseconds> seconds(const json& v, const std::string& name) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0 || v.get<double>() > 1e7)
    return bad_param(name, "a positive number of seconds");
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(v.get<double>() * 1000)));
}

// The parameters both kinds share, applied to either request type.
template <class Request>
status common_param(Request& r, const std::string& key, const json& v, bool& known) {
  known = true;
  if (key == "argv") {
    if (!v.is_array()) return bad_param(key, "an array of strings");
    for (auto& a : v) {
      if (!a.is_string()) return bad_param(key, "an array of strings");
      r.argv.push_back(a.get<std::string>());
    }
  } else if (key == "env") {
    if (!v.is_object()) return bad_param(key, "an object of strings");
    for (auto& [name, value] : v.items()) {
      if (!value.is_string()) return bad_param("env." + name, "a string");
      r.env[name] = value.template get<std::string>();
    }
  } else if (key == "tier") {
    if (!v.is_string()) return bad_param(key, "a string");
    r.tier = v.get<std::string>();
  } else if (key == "lifetime") {
    auto t = seconds(v, key);
    if (!t) return t.error();
    r.lifetime = *t;
  } else if (key == "memory" || key == "memory_limit") {
    auto n = positive(v, key);
    if (!n) return n.error();
    r.memory_limit_bytes = *n;
  } else if (key == "pids" || key == "pids_limit") {
    auto n = positive(v, key);
    if (!n) return n.error();
    r.pids_limit = *n;
  } else if (key == "cpu" || key == "cpu_cores") {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0) return bad_param(key, "a positive number");
    r.cpu_cores = v.get<double>();
  } else if (key == "network_allow") {
    // Narrows the daemon profile's allow-list, as exec's does (config/tighten_network.hpp).
    if (!v.is_array()) return bad_param(key, "an array of strings");
    std::vector<std::string> entries;
    for (auto& a : v) {
      if (!a.is_string()) return bad_param(key, "an array of strings");
      entries.push_back(a.get<std::string>());
    }
    r.network_allow = std::move(entries);
  } else {
    known = false;
  }
  return ok();
}

failure unknown_param(const std::string& key, const char* kind) {
  return make_failure(failure_kind::invalid_request,
                      "unknown parameter \"" + key + "\" for session.open with kind \"" + kind + "\"");
}

expected<session_request> stdio_params(const json& params) {
  session_request r;
  for (auto& [key, v] : params.items()) {
    if (key == "kind") continue;
    bool known = false;
    if (auto s = common_param(r, key, v, known); !s) return s.error();
    if (known) continue;
    if (key == "framing") {
      if (!v.is_string()) return bad_param(key, "\"newline\", \"content-length\" or \"raw\"");
      auto name = v.get<std::string>();
      auto mode = parse_framing_mode(name);
      if (!mode) return bad_param(key, "\"newline\", \"content-length\" or \"raw\"");
      r.framing = *mode;
    } else if (key == "forward_stderr") {
      if (!v.is_boolean()) return bad_param(key, "true or false");
      r.forward_stderr = v.get<bool>();
    } else if (key == "idle_timeout") {
      auto t = seconds(v, key);
      if (!t) return t.error();
      r.idle_timeout = *t;
    } else {
      return unknown_param(key, "stdio");
    }
  }
  if (r.argv.empty()) return make_failure(failure_kind::invalid_request, "a stdio session needs a non-empty \"argv\"");
  return r;
}

expected<terminal_request> terminal_params(const json& params) {
  terminal_request r;
  for (auto& [key, v] : params.items()) {
    if (key == "kind") continue;
    bool known = false;
    if (auto s = common_param(r, key, v, known); !s) return s.error();
    if (known) continue;
    if (key == "rows" || key == "cols") {
      auto n = positive(v, key, 0xFFFF);
      if (!n) return n.error();
      (key == "rows" ? r.rows : r.cols) = static_cast<std::uint16_t>(*n);
    } else if (key == "echo") {
      if (!v.is_boolean()) return bad_param(key, "true or false");
      r.echo = v.get<bool>();
    } else {
      return unknown_param(key, "terminal");
    }
  }
  return r;
}

json data_params(const std::string& id, const std::string& bytes) {
  json p{{"session", id}};
  if (is_valid_utf8(bytes)) {
    p["data"] = bytes;
  } else {
    p["data"] = to_valid_utf8(bytes);
    p["data_base64"] = base64_encode(bytes);
  }
  return p;
}

void notify(self_ptr self, const std::string& method, const json& params) {
  write(self, rpc::notification_line(method, params));
}

// After a stdio client's EOF or when the daemon stops: once everything asked before has
// its answer, the loop closes the connection after writing what is queued.
void hang_up_when_answered(self_ptr self) {
  auto& st = self->state;
  if (st.phase != connection_phase::input_ended && st.phase != connection_phase::stopping) return;
  if (st.jobs_running > 0 || st.opening > 0 || !st.sessions.empty()) return;
  st.info->loop->close(st.id, st.phase == connection_phase::stopping ? "the daemon is stopping" : "the client hung up");
}

// Ends the sessions the way the phase asks: after a stdio client's EOF a stdio session
// gets EOF too (it answers what it was sent, then ends); a stop cancels everything.
void end_session(self_ptr self, const client_session& s) {
  bool graceful = self->state.phase == connection_phase::input_ended && !s.terminal;
  if (graceful) self->send(s.actor, close_atom::value);
  else self->send(s.actor, cancel_atom::value);
}

void forget_session(self_ptr self, std::uint64_t number) {
  auto& st = self->state;
  auto it = st.sessions.find(number);
  if (it == st.sessions.end()) return;
  st.session_ids.erase(it->second.id);
  st.sessions.erase(it);
}

// Returns false when the event belongs to a session whose opening reply is still on its
// way: then it is kept and replayed once the session has its id.
bool known_session(self_ptr self, std::uint64_t number, early_session_event ev) {
  if (self->state.sessions.count(number)) return true;
  if (self->state.opening > 0) self->state.early[number].push_back(std::move(ev));
  return false;
}

void on_message(self_ptr self, session_message& m) {
  if (!known_session(self, m.session, m)) return;
  auto& s = self->state.sessions.at(m.session);
  auto p = data_params(s.id, m.body);
  p["seq"] = m.seq;
  notify(self, "session.output", p);
  // The line is queued to the socket: the session may send one more. A client that does
  // not read fills the socket's bounded buffer and is disconnected, which cancels this.
  self->send(s.actor, ack_atom::value, std::uint64_t{1});
}

void on_refused(self_ptr self, session_refused& r) {
  if (!known_session(self, r.session, r)) return;
  auto& s = self->state.sessions.at(r.session);
  notify(self, "session.refused",
         {{"session", s.id}, {"code", rpc::code_for(r.error.kind)}, {"kind", to_string(r.error.kind)}, {"message", r.error.message}});
}

void on_stderr(self_ptr self, session_stderr& e) {
  if (!known_session(self, e.session, e)) return;
  auto& s = self->state.sessions.at(e.session);
  auto text = s.stderr_carry.take(e.bytes);
  if (!text.empty()) notify(self, "session.stderr", data_params(s.id, text));
}

void on_terminal_output(self_ptr self, terminal_output& o) {
  if (!known_session(self, o.session, o)) return;
  auto& s = self->state.sessions.at(o.session);
  auto text = s.carry.take(o.bytes);
  if (!text.empty()) notify(self, "session.output", data_params(s.id, text));
}

void on_network(self_ptr self, session_network& n) {
  if (!known_session(self, n.session, n)) return;
  auto& s = self->state.sessions.at(n.session);
  notify(self, "session.network", {{"session", s.id}, {"event", to_json(n.event)}});
}

void on_ended(self_ptr self, session_ended& e) {
  if (!known_session(self, e.session, e)) return;
  auto& s = self->state.sessions.at(e.session);
  if (auto rest = s.carry.flush(); !rest.empty()) notify(self, "session.output", data_params(s.id, rest));
  if (auto rest = s.stderr_carry.flush(); !rest.empty()) notify(self, "session.stderr", data_params(s.id, rest));
  json p{{"session", s.id},
         {"reason", to_string(e.reason)},
         {"exit_code", e.exit_code ? json(*e.exit_code) : json(nullptr)},
         {"signal", e.term_signal ? json(*e.term_signal) : json(nullptr)},
         {"stderr_tail", is_valid_utf8(e.stderr_tail) ? e.stderr_tail : to_valid_utf8(e.stderr_tail)},
         {"messages_out", e.messages_out},
         {"messages_in", e.messages_in}};
  if (!e.detail.empty()) p["detail"] = e.detail;
  if (e.network) add_network_audit(p, *e.network);
  notify(self, "session.ended", p);
  forget_session(self, e.session);
  hang_up_when_answered(self);
}

void replay_early(self_ptr self, std::uint64_t number) {
  auto it = self->state.early.find(number);
  if (it == self->state.early.end()) return;
  auto events = std::move(it->second);
  self->state.early.erase(it);
  for (auto& ev : events)
    std::visit(
        [&](auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, session_message>) on_message(self, x);
          else if constexpr (std::is_same_v<T, session_refused>) on_refused(self, x);
          else if constexpr (std::is_same_v<T, session_stderr>) on_stderr(self, x);
          else if constexpr (std::is_same_v<T, terminal_output>) on_terminal_output(self, x);
          else if constexpr (std::is_same_v<T, session_network>) on_network(self, x);
          else on_ended(self, x);
        },
        ev);
}

// The client went while sessions were being opened: the last reply ends the actor.
void quit_if_closed(self_ptr self) {
  if (self->state.phase == connection_phase::closed && self->state.opening == 0)
    self->quit(caf::exit_reason::user_shutdown);
}

void session_open_done(self_ptr self, const json& id, bool terminal, session_opened& o) {
  auto& st = self->state;
  --st.opening;
  if (st.phase == connection_phase::closed) {
    if (o.ok) self->send(o.session, cancel_atom::value);
    return quit_if_closed(self);
  }
  if (!o.ok) {
    st.early.erase(o.number);
    write(self, rpc::error_line(rpc::error_from(o.error, id)));
    return hang_up_when_answered(self);
  }
  auto sid = "s" + std::to_string(st.next_session++);
  auto& s = st.sessions[o.number];
  s.id = sid;
  s.terminal = terminal;
  s.actor = o.session;
  st.session_ids[sid] = o.number;
  write(self, rpc::response_line(id, {{"session", sid}}));
  if (terminal) {
    auto number = o.number;
    self->request(o.session, std::chrono::seconds(30), reattach_atom::value, caf::actor{self})
        .then(
            [=](std::string& scrollback) {
              if (!scrollback.empty()) {
                terminal_output t{number, std::move(scrollback)};
                on_terminal_output(self, t);
              }
            },
            [=](caf::error&) {});
  }
  replay_early(self, o.number);
  if (st.opening == 0) st.early.clear();
  if (st.phase != connection_phase::open && st.sessions.count(o.number)) end_session(self, st.sessions.at(o.number));
  hang_up_when_answered(self);
}

void session_open(self_ptr self, const rpc::request& r) {
  auto& st = self->state;
  if (st.sessions.size() + st.opening >= st.info->max_execs_per_client)
    return reply_error(self, rpc::kLimitExceeded,
                       "at most " + std::to_string(st.info->max_execs_per_client) + " sessions may be open on one connection",
                       r.id, {{"kind", to_string(failure_kind::limit_exceeded)}});
  auto kind = r.params.find("kind");
  std::string k = kind != r.params.end() && kind->is_string() ? kind->get<std::string>() : "";
  auto id = r.id;
  auto failed = [=](caf::error& e) {
    --self->state.opening;
    if (self->state.phase == connection_phase::closed) return quit_if_closed(self);
    write(self, rpc::error_line(rpc::error_from(
                    make_failure(failure_kind::internal, "supervisor: " + self->system().render(e)), id)));
    hang_up_when_answered(self);
  };
  if (k == "stdio") {
    auto req = stdio_params(r.params);
    if (!req) return write(self, rpc::error_line(rpc::error_from(req.error(), r.id)));
    ++st.opening;
    self->request(st.info->supervisor, std::chrono::seconds(30), session_atom::value, std::move(*req), caf::actor{self})
        .then([=](session_opened& o) { session_open_done(self, id, false, o); }, failed);
  } else if (k == "terminal") {
    auto req = terminal_params(r.params);
    if (!req) return write(self, rpc::error_line(rpc::error_from(req.error(), r.id)));
    ++st.opening;
    self->request(st.info->supervisor, std::chrono::seconds(30), terminal_atom::value, std::move(*req))
        .then([=](session_opened& o) { session_open_done(self, id, true, o); }, failed);
  } else {
    reply_error(self, rpc::kInvalidParams, "session.open needs \"kind\": \"stdio\" or \"terminal\"", r.id);
  }
}

// This connection's session named by params.session, or null after answering the error.
client_session* find_session(self_ptr self, const rpc::request& r) {
  auto p = r.params.find("session");
  if (p == r.params.end() || !p->is_string()) {
    reply_error(self, rpc::kInvalidParams, r.method + " needs \"session\": the id session.open returned", r.id);
    return nullptr;
  }
  auto it = self->state.session_ids.find(p->get<std::string>());
  if (it == self->state.session_ids.end()) {
    reply_error(self, rpc::kInvalidParams, "no open session " + p->dump() + " on this connection", r.id);
    return nullptr;
  }
  return &self->state.sessions.at(it->second);
}

bool only_params(self_ptr self, const rpc::request& r, std::initializer_list<const char*> allowed) {
  for (auto& [key, v] : r.params.items()) {
    bool fine = false;
    for (auto* a : allowed) fine = fine || key == a;
    if (!fine) {
      reply_error(self, rpc::kInvalidParams, "unknown parameter \"" + key + "\" for " + r.method, r.id);
      return false;
    }
  }
  return true;
}

void session_write(self_ptr self, const rpc::request& r) {
  if (!only_params(self, r, {"session", "data", "data_base64"})) return;
  auto* s = find_session(self, r);
  if (!s) return;
  auto d = r.params.find("data");
  auto b = r.params.find("data_base64");
  if ((d == r.params.end()) == (b == r.params.end()))
    return reply_error(self, rpc::kInvalidParams, "session.write needs \"data\" or \"data_base64\" (one of them)", r.id);
  std::string bytes;
  if (d != r.params.end()) {
    if (!d->is_string()) return reply_error(self, rpc::kInvalidParams, "\"data\" must be a string", r.id);
    bytes = d->get<std::string>();
  } else {
    auto decoded = b->is_string() ? base64_decode(b->get<std::string>()) : expected<std::string>(failure{});
    if (!decoded) return reply_error(self, rpc::kInvalidParams, "\"data_base64\" must be standard base64 with padding", r.id);
    bytes = std::move(*decoded);
  }
  auto id = r.id;
  if (s->terminal) {
    self->send(s->actor, input_atom::value, std::move(bytes));
    return write(self, rpc::response_line(id, {{"written", true}}));
  }
  // The reply comes once the session's input queue is under its bound: a client writing
  // faster than the child reads waits for its answers.
  self->request(s->actor, caf::infinite, send_atom::value, std::move(bytes))
      .then(
          [=](session_reply& rep) {
            if (rep.ok) write(self, rpc::response_line(id, {{"written", true}}));
            else write(self, rpc::error_line(rpc::error_from(rep.error, id)));
          },
          [=](caf::error& e) {
            write(self, rpc::error_line(rpc::error_from(
                            make_failure(failure_kind::invalid_request, "the session is gone: " + self->system().render(e)), id)));
          });
}

void session_resize(self_ptr self, const rpc::request& r) {
  if (!only_params(self, r, {"session", "rows", "cols"})) return;
  auto* s = find_session(self, r);
  if (!s) return;
  if (!s->terminal) return reply_error(self, rpc::kInvalidParams, "session.resize applies to terminal sessions only", r.id);
  auto rows = r.params.find("rows");
  auto cols = r.params.find("cols");
  if (rows == r.params.end() || cols == r.params.end())
    return reply_error(self, rpc::kInvalidParams, "session.resize needs \"rows\" and \"cols\"", r.id);
  auto nr = positive(*rows, "rows", 0xFFFF);
  if (!nr) return write(self, rpc::error_line(rpc::error_from(nr.error(), r.id)));
  auto nc = positive(*cols, "cols", 0xFFFF);
  if (!nc) return write(self, rpc::error_line(rpc::error_from(nc.error(), r.id)));
  self->send(s->actor, resize_atom::value, static_cast<std::uint16_t>(*nr), static_cast<std::uint16_t>(*nc));
  write(self, rpc::response_line(r.id, {{"resized", true}}));
}

void session_close(self_ptr self, const rpc::request& r) {
  if (!only_params(self, r, {"session"})) return;
  auto* s = find_session(self, r);
  if (!s) return;
  // Stdio: EOF on stdin, a grace, then termination; a terminal is cancelled. Either way
  // session.ended follows.
  if (s->terminal) self->send(s->actor, cancel_atom::value);
  else self->send(s->actor, close_atom::value);
  write(self, rpc::response_line(r.id, {{"closing", true}}));
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
  if (r.method == "session.open") return session_open(self, r);
  if (r.method == "session.write") return session_write(self, r);
  if (r.method == "session.resize") return session_resize(self, r);
  if (r.method == "session.close") return session_close(self, r);
  reply_error(self, rpc::kMethodNotFound, "unknown method \"" + r.method + "\"", r.id);
}

} // namespace

caf::behavior client_connection(self_ptr self, connection_id id, peer_credentials peer,
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
        bool busy = st.jobs_running > 0 || st.opening > 0 || !st.sessions.empty();
        auto quiet = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - st.last_activity);
        if (busy || quiet < idle) return (void)self->delayed_send(self, busy ? idle : idle - quiet, idle_atom::value);
        st.info->loop->close(st.id, "idle for " + std::to_string(idle.count()) + " ms with nothing in flight");
      },
      [=](conn_line& line) {
        self->state.last_activity = std::chrono::steady_clock::now();
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
      [=](rpc_out_atom, std::string& line, const caf::actor& ack_to, std::uint64_t bytes) {
        write(self, std::move(line));
        self->send(ack_to, ack_atom::value, bytes);  // queued to the socket: the stream may go on
      },
      [=](job_done_atom, const std::string& key, std::string& line) {
        auto& st = self->state;
        // Stopping: this call was answered with kStopping already.
        if (st.phase == connection_phase::stopping) return;
        st.jobs.erase(key);
        if (st.jobs_running > 0) --st.jobs_running;
        st.last_activity = std::chrono::steady_clock::now();
        write(self, std::move(line));
        hang_up_when_answered(self);
      },
      [=](conn_input_ended&) {
        auto& st = self->state;
        if (st.phase != connection_phase::open) return;
        st.phase = connection_phase::input_ended;
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
      [=](session_message& m) { on_message(self, m); },
      [=](session_refused& r) { on_refused(self, r); },
      [=](session_stderr& e) { on_stderr(self, e); },
      [=](terminal_output& o) { on_terminal_output(self, o); },
      [=](session_network& n) { on_network(self, n); },
      [=](session_ended& e) { on_ended(self, e); },
      [=](conn_closed&) {
        // Linked jobs exit with us; each execution sees its caller go and cancels. Sessions
        // are cancelled outright: a terminal does not otherwise notice its client leave.
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
