#include "proto/daemon/terminal_attach.hpp"

#include <vector>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/workspaces/workspace_messages.hpp"
#include "proto/daemon/client_sessions.hpp"
#include "proto/daemon/workspace_methods.hpp"
#include "proto/jsonrpc/param_values.hpp"
#include "proto/jsonrpc/workspace_json.hpp"

namespace corral {

namespace {

using nlohmann::json;

// The registry and a terminal answer from memory.
constexpr std::chrono::seconds kAttachBound{10};

failure already_attached(const terminal_found& found, const client_session& as) {
  return make_failure(failure_kind::conflict,
                      "terminal " + found.listing.id + " is already attached on this connection as " + as.id);
}

// The terminal said yes: from now on this connection hears it under a session id of its own.
void attached(connection_self self, const json& id, const terminal_found& found, terminal_attached& a) {
  auto& st = self->state;
  if (st.phase == connection_phase::closed || st.phase == connection_phase::stopping) {
    self->send(found.actor, detach_atom::value, caf::actor{self});
    return;
  }
  if (auto known = st.sessions.find(found.number); known != st.sessions.end())
    return reply_failure(self, already_attached(found, known->second), id);  // two attaches raced: the first holds it
  auto& s = add_session(self, found.number, found.actor, true);
  s.resident = true;
  s.writer = a.writer;
  write_line(self, rpc::response_line(id, {{"session", s.id},
                                           {"terminal", found.listing.id},
                                           {"workspace", found.workspace},
                                           {"writer", a.writer}}));
  if (!a.scrollback.empty()) {
    terminal_output replay{found.number, std::move(a.scrollback)};
    relay(self, replay);
  }
}

} // namespace

failure viewer_only(const client_session& s, const char* what) {
  return make_failure(failure_kind::conflict, "session " + s.id + " views its terminal without writing; it cannot " + what +
                                                  " it (workspace.attach with take_over to become the writer)");
}

void attach_terminal(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"workspace", "terminal", "writer", "take_over"})) return;
  auto ref = workspace_ref_param(r.params);
  if (!ref) return reply_failure(self, ref.error(), r.id);
  std::string terminal;
  bool writer = true, take_over = false;
  if (auto it = r.params.find("terminal"); it != r.params.end())
    if (auto s = read_into(string_param(*it, "terminal"), terminal); !s) return reply_failure(self, s.error(), r.id);
  if (auto it = r.params.find("writer"); it != r.params.end())
    if (auto s = read_into(bool_param(*it, "writer"), writer); !s) return reply_failure(self, s.error(), r.id);
  if (auto it = r.params.find("take_over"); it != r.params.end())
    if (auto s = read_into(bool_param(*it, "take_over"), take_over); !s) return reply_failure(self, s.error(), r.id);
  auto& st = self->state;
  if (auto full = no_session_slot(st)) return reply_failure(self, *full, r.id);
  ++st.calls_pending;
  auto id = r.id;
  auto lost = [=](caf::error& e) {
    reply_failure(self, make_failure(failure_kind::internal, "workspace.attach: no answer: " + self->system().render(e)),
                  id);
    call_answered(self);
  };
  self->request(st.info->workspaces, kAttachBound, ws_term_atom::value, std::move(*ref), connection_principal(self),
                std::move(terminal))
      .then(
          [=](terminal_found& found) {
            if (!found.ok) {
              reply_failure(self, found.error, id);
              return call_answered(self);
            }
            if (auto known = self->state.sessions.find(found.number); known != self->state.sessions.end()) {
              reply_failure(self, already_attached(found, known->second), id);
              return call_answered(self);
            }
            self->request(found.actor, kAttachBound, attach_atom::value, caf::actor{self}, writer, take_over)
                .then(
                    [=](terminal_attached& a) {
                      if (!a.ok) reply_failure(self, a.error, id);
                      else attached(self, id, found, a);
                      call_answered(self);
                    },
                    [=](caf::error&) {
                      // The terminal ended between the lookup and the attach.
                      reply_failure(self,
                                    make_failure(failure_kind::not_found, "terminal " + found.listing.id + " has ended"),
                                    id);
                      call_answered(self);
                    });
          },
          lost);
}

void detach_terminals(connection_self self) {
  std::vector<std::uint64_t> left;
  for (auto& [number, s] : self->state.sessions)
    if (s.resident) {
      self->send(s.actor, detach_atom::value, caf::actor{self});
      left.push_back(number);
    }
  for (auto number : left) forget_session(self, number);
}

void session_detach(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"session"})) return;
  auto* s = find_session(self, r);
  if (!s) return;
  if (!s->resident)
    return reply_failure(self,
                         make_failure(failure_kind::invalid_request,
                                      "session " + s->id +
                                          " is not a workspace's terminal: only those live on detached (session.close "
                                          "ends the others)"),
                         r.id);
  auto sid = s->id;
  self->send(s->actor, detach_atom::value, caf::actor{self});
  forget_session(self, self->state.session_ids.at(sid));
  write_line(self, rpc::response_line(r.id, {{"session", sid}, {"detached", true}}));
  hang_up_when_answered(self);
}

void relay(connection_self self, terminal_demoted& d) {
  auto it = self->state.sessions.find(d.session);
  if (it == self->state.sessions.end()) return;
  it->second.writer = false;
  notify(self, "session.writer_lost", {{"session", it->second.id}, {"reason", "taken_over"}});
}

} // namespace corral
