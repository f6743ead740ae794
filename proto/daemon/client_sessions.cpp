#include "proto/daemon/client_sessions.hpp"

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "proto/daemon/terminal_attach.hpp"
#include "proto/daemon/workspace_methods.hpp"
#include "proto/jsonrpc/exec_params.hpp"
#include "proto/jsonrpc/param_values.hpp"
#include "proto/jsonrpc/result_json.hpp"
#include "proto/jsonrpc/session_params.hpp"

namespace corral {

using nlohmann::json;

namespace {

json data_params(const std::string& id, const std::string& bytes) {
  json p{{"session", id}};
  put_bytes(p, "data", bytes);
  return p;
}

// Returns false when the event belongs to a session whose opening reply is still on its
// way: then it is kept and replayed once the session has its id.
bool known_session(connection_self self, std::uint64_t number, early_session_event ev) {
  if (self->state.sessions.count(number)) return true;
  if (self->state.opening > 0) self->state.early[number].push_back(std::move(ev));
  return false;
}

// The client went while sessions were being opened: the last reply ends the actor.
void quit_if_closed(connection_self self) {
  if (self->state.phase == connection_phase::closed && self->state.opening == 0)
    self->quit(caf::exit_reason::user_shutdown);
}

void replay_early(connection_self self, std::uint64_t number) {
  auto it = self->state.early.find(number);
  if (it == self->state.early.end()) return;
  auto events = std::move(it->second);
  self->state.early.erase(it);
  for (auto& ev : events) std::visit([&](auto& x) { relay(self, x); }, ev);
}

void session_open_done(connection_self self, const json& id, bool terminal, session_opened& o) {
  auto& st = self->state;
  --st.opening;
  if (st.phase == connection_phase::closed) {
    if (o.ok) self->send(o.session, cancel_atom::value);
    return quit_if_closed(self);
  }
  if (!o.ok) {
    st.early.erase(o.number);
    write_line(self, rpc::error_line(rpc::error_from(o.error, id)));
    return hang_up_when_answered(self);
  }
  auto& s = add_session(self, o.number, o.session, terminal);
  s.resident = !o.terminal.empty();
  json reply{{"session", s.id}};
  if (s.resident) {
    reply["terminal"] = o.terminal;
    reply["workspace"] = o.workspace;
  }
  write_line(self, rpc::response_line(id, reply));
  if (terminal) {
    auto number = o.number;
    self->request(o.session, std::chrono::seconds(30), attach_atom::value, caf::actor{self}, true, false)
        .then(
            [=](terminal_attached& a) {
              if (!a.scrollback.empty()) {
                terminal_output t{number, std::move(a.scrollback)};
                relay(self, t);
              }
            },
            [=](caf::error&) {});
  }
  replay_early(self, o.number);
  if (st.opening == 0) st.early.clear();
  if (st.phase != connection_phase::open && st.sessions.count(o.number)) end_session(self, st.sessions.at(o.number));
  hang_up_when_answered(self);
}

} // namespace

std::optional<failure> no_session_slot(const client_connection_state& st) {
  if (st.sessions.size() + st.opening < st.info->max_execs_per_client) return std::nullopt;
  return make_failure(failure_kind::limit_exceeded,
                      "at most " + std::to_string(st.info->max_execs_per_client) + " sessions may be open on one connection");
}

client_session& add_session(connection_self self, std::uint64_t number, caf::actor actor, bool terminal) {
  auto& st = self->state;
  auto sid = "s" + std::to_string(st.next_session++);
  auto& s = st.sessions[number];
  s.id = sid;
  s.terminal = terminal;
  s.actor = std::move(actor);
  st.session_ids[sid] = number;
  return s;
}

client_session* find_session(connection_self self, const rpc::request& r) {
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

void forget_session(connection_self self, std::uint64_t number) {
  auto& st = self->state;
  auto it = st.sessions.find(number);
  if (it == st.sessions.end()) return;
  st.session_ids.erase(it->second.id);
  st.sessions.erase(it);
}

void end_session(connection_self self, const client_session& s) {
  bool graceful = self->state.phase == connection_phase::input_ended && !s.terminal;
  if (graceful) self->send(s.actor, close_atom::value);
  else self->send(s.actor, cancel_atom::value);
}

void relay(connection_self self, session_message& m) {
  if (!known_session(self, m.session, m)) return;
  auto& s = self->state.sessions.at(m.session);
  auto p = data_params(s.id, m.body);
  p["seq"] = m.seq;
  notify(self, "session.output", p);
  // The line is queued to the socket: the session may send one more. A client that does
  // not read fills the socket's bounded buffer and is disconnected, which cancels this.
  self->send(s.actor, ack_atom::value, std::uint64_t{1});
}

void relay(connection_self self, session_refused& r) {
  if (!known_session(self, r.session, r)) return;
  auto& s = self->state.sessions.at(r.session);
  notify(self, "session.refused",
         {{"session", s.id}, {"code", rpc::code_for(r.error.kind)}, {"kind", to_string(r.error.kind)}, {"message", r.error.message}});
}

void relay(connection_self self, session_stderr& e) {
  if (!known_session(self, e.session, e)) return;
  auto& s = self->state.sessions.at(e.session);
  auto text = s.stderr_carry.take(e.bytes);
  if (!text.empty()) notify(self, "session.stderr", data_params(s.id, text));
}

void relay(connection_self self, session_gate& g) {
  if (!known_session(self, g.session, g)) return;
  auto& s = self->state.sessions.at(g.session);
  for (auto& line : g.decisions)
    notify(self, "session.gate", {{"session", s.id}, {"decision", json::parse(line, nullptr, false)}});
  for (auto& w : g.warnings) notify(self, "session.gate", {{"session", s.id}, {"warning", w}});
}

void relay(connection_self self, terminal_output& o) {
  if (!known_session(self, o.session, o)) return;
  auto& s = self->state.sessions.at(o.session);
  auto text = s.carry.take(o.bytes);
  if (!text.empty()) notify(self, "session.output", data_params(s.id, text));
}

void relay(connection_self self, session_network& n) {
  if (!known_session(self, n.session, n)) return;
  auto& s = self->state.sessions.at(n.session);
  notify(self, "session.network", {{"session", s.id}, {"event", to_json(n.event)}});
}

void relay(connection_self self, session_ended& e) {
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

void session_open(connection_self self, const rpc::request& r) {
  auto& st = self->state;
  if (auto full = no_session_slot(st)) return reply_failure(self, *full, r.id);
  auto kind = r.params.find("kind");
  std::string k = kind != r.params.end() && kind->is_string() ? kind->get<std::string>() : "";
  auto id = r.id;
  auto failed = [=](caf::error& e) {
    --self->state.opening;
    if (self->state.phase == connection_phase::closed) return quit_if_closed(self);
    write_line(self, rpc::error_line(rpc::error_from(
                    make_failure(failure_kind::internal, "supervisor: " + self->system().render(e)), id)));
    hang_up_when_answered(self);
  };
  if (k == "stdio") {
    auto req = stdio_params_from_json(r.params);
    if (!req) return write_line(self, rpc::error_line(rpc::error_from(req.error(), r.id)));
    req->principal = connection_principal(self);
    ++st.opening;
    self->request(st.info->supervisor, std::chrono::seconds(30), session_atom::value, std::move(*req), caf::actor{self})
        .then([=](session_opened& o) { session_open_done(self, id, false, o); }, failed);
  } else if (k == "terminal") {
    auto req = terminal_params_from_json(r.params);
    if (!req) return write_line(self, rpc::error_line(rpc::error_from(req.error(), r.id)));
    req->principal = connection_principal(self);
    ++st.opening;
    self->request(st.info->supervisor, std::chrono::seconds(30), terminal_atom::value, std::move(*req))
        .then([=](session_opened& o) { session_open_done(self, id, true, o); }, failed);
  } else {
    reply_error(self, rpc::kInvalidParams, "session.open needs \"kind\": \"stdio\" or \"terminal\"", r.id);
  }
}

void session_write(connection_self self, const rpc::request& r) {
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
  if (!s->writer) return reply_failure(self, viewer_only(*s, "write to"), id);
  if (s->terminal) {
    self->send(s->actor, input_atom::value, std::move(bytes));
    return write_line(self, rpc::response_line(id, {{"written", true}}));
  }
  // The reply comes once the session's input queue is under its bound: a client writing
  // faster than the child reads waits for its answers.
  self->request(s->actor, caf::infinite, send_atom::value, std::move(bytes))
      .then(
          [=](session_reply& rep) {
            if (rep.ok) write_line(self, rpc::response_line(id, {{"written", true}}));
            else write_line(self, rpc::error_line(rpc::error_from(rep.error, id)));
          },
          [=](caf::error& e) {
            write_line(self, rpc::error_line(rpc::error_from(
                            make_failure(failure_kind::invalid_request, "the session is gone: " + self->system().render(e)), id)));
          });
}

void session_resize(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"session", "rows", "cols"})) return;
  auto* s = find_session(self, r);
  if (!s) return;
  if (!s->terminal) return reply_error(self, rpc::kInvalidParams, "session.resize applies to terminal sessions only", r.id);
  if (!s->writer) return reply_failure(self, viewer_only(*s, "resize"), r.id);
  auto rows = r.params.find("rows");
  auto cols = r.params.find("cols");
  if (rows == r.params.end() || cols == r.params.end())
    return reply_error(self, rpc::kInvalidParams, "session.resize needs \"rows\" and \"cols\"", r.id);
  auto nr = positive_param(*rows, "rows", 0xFFFF);
  if (!nr) return write_line(self, rpc::error_line(rpc::error_from(nr.error(), r.id)));
  auto nc = positive_param(*cols, "cols", 0xFFFF);
  if (!nc) return write_line(self, rpc::error_line(rpc::error_from(nc.error(), r.id)));
  self->send(s->actor, resize_atom::value, static_cast<std::uint16_t>(*nr), static_cast<std::uint16_t>(*nc));
  write_line(self, rpc::response_line(r.id, {{"resized", true}}));
}

void session_close(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"session"})) return;
  auto* s = find_session(self, r);
  if (!s) return;
  // Stdio: EOF on stdin, a grace, then termination; a terminal is cancelled. Either way
  // session.ended follows.
  if (s->terminal) self->send(s->actor, cancel_atom::value);
  else self->send(s->actor, close_atom::value);
  write_line(self, rpc::response_line(r.id, {{"closing", true}}));
}

} // namespace corral
