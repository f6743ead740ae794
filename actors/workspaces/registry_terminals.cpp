// The terminals a workspace keeps. A terminal opened in a workspace with a holder is handed
// to the registry by the supervisor as soon as it opens: from then on it counts as the
// workspace's own process (it does not hold the workspace "running", so pause, snapshot
// and end go on around it), it outlives the client that opened it, and any client of the
// same principal finds it again by its id to attach (proto/daemon/terminal_attach.cpp).
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/workspaces/registry_state.hpp"

namespace corral::registry {

namespace {

workspace_entry* holding(registry_state& st, std::uint64_t number) {
  for (auto& [id, e] : st.entries)
    if (e.terminals.count(number)) return &e;
  return nullptr;
}

} // namespace

void keep_terminal(self_ptr self, const std::string& id, std::uint64_t loan, caf::actor terminal, std::uint64_t number,
                   std::vector<std::string> argv) {
  auto& st = self->state;
  auto it = st.entries.find(id);
  if (it == st.entries.end()) {
    // Ended between the borrow and now: the terminal ends with it.
    self->send(terminal, cancel_atom::value);
    return;
  }
  auto& e = it->second;
  // It was borrowed as an execution is; from now on it is the workspace's own.
  e.loans.erase(loan);
  terminal_listing listing{resident_terminal_id(number), std::move(argv), unix_now(), 0, false};
  spdlog::info("workspace {} keeps terminal {}", id, listing.id);
  self->monitor(terminal);
  self->send(terminal, watch_atom::value, caf::actor_cast<caf::actor>(self));
  e.terminals[number] = resident_terminal{std::move(terminal), std::move(listing)};
  touch(e);
  journal(e);
}

terminal_list terminals_of(registry_state& st, const std::string& ref, const std::string& principal) {
  auto* e = find(st, ref, principal);
  if (!e) return {false, no_such(ref), {}};
  terminal_list out{true, {}, {}};
  for (auto& [number, t] : e->terminals) out.items.push_back(t.listing);
  return out;
}

terminal_found terminal_named(registry_state& st, const std::string& ref, const std::string& principal,
                              const std::string& terminal) {
  auto* e = find(st, ref, principal);
  if (!e) return {false, no_such(ref), {}, 0, {}, {}};
  if (e->terminals.empty())
    return {false, make_failure(failure_kind::not_found, "workspace " + e->record.id + " has no terminal"), {}, 0, {}, {}};
  touch(*e);
  if (terminal.empty()) {
    auto& [number, t] = *e->terminals.rbegin();
    return {true, {}, t.actor, number, e->record.id, t.listing};
  }
  for (auto& [number, t] : e->terminals)
    if (t.listing.id == terminal) return {true, {}, t.actor, number, e->record.id, t.listing};
  return {false, make_failure(failure_kind::not_found, "workspace " + e->record.id + " has no terminal '" + terminal + "'"),
          {}, 0, {}, {}};
}

void note_viewers(registry_state& st, const terminal_viewers& v) {
  auto* e = holding(st, v.session);
  if (!e) return;
  auto& listing = e->terminals.at(v.session).listing;
  // The idle clock starts again when the last viewer goes.
  if (listing.viewers > 0 && v.viewers == 0) touch(*e);
  listing.viewers = v.viewers;
  listing.writer = v.writer;
}

bool forget_terminal(registry_state& st, const caf::actor_addr& gone) {
  for (auto& [id, e] : st.entries)
    for (auto it = e.terminals.begin(); it != e.terminals.end(); ++it)
      if (it->second.actor.address() == gone) {
        spdlog::info("workspace {}: terminal {} ended", id, it->second.listing.id);
        e.terminals.erase(it);
        touch(e);
        journal(e);
        return true;
      }
  return false;
}

bool watched(const workspace_entry& e) {
  for (auto& [number, t] : e.terminals)
    if (t.listing.viewers > 0) return true;
  return false;
}

void end_terminals(self_ptr self, workspace_entry& e) {
  for (auto& [number, t] : e.terminals) {
    self->demonitor(t.actor);
    self->send(t.actor, cancel_atom::value);
  }
  e.terminals.clear();
}

} // namespace corral::registry
