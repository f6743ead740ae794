#include "actors/egress/egress_proxy.hpp"

#include <caf/all.hpp>


namespace corral {

namespace {

using clock = std::chrono::steady_clock;

// The relay closes every connection when the execution ends; their reports are
// milliseconds behind. This only bounds a loop that never answers.
constexpr auto kAuditBound = std::chrono::seconds(2);

} // namespace

namespace {

using self_ptr = caf::stateful_actor<egress_proxy_state>*;

void record(self_ptr self, egress_open_event&& e) {
  auto& st = self->state;
  e.event.duration_ms = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - e.began).count());
  if (st.live) self->send(st.live, e.event);
  if (st.audit.events.size() < kMaxNetworkEvents) st.audit.events.push_back(std::move(e.event));
  else ++st.audit.dropped;
}

void deliver_if_complete(self_ptr self, bool bound_reached) {
  auto& st = self->state;
  if (!st.waiting || (!st.open.empty() && !bound_reached)) return;
  for (auto& [id, e] : st.open) {
    if (e.event.failure.empty()) e.event.failure = "open when the execution ended";
    record(self, std::move(e));
  }
  st.open.clear();
  st.waiting->deliver(st.audit);
  st.waiting.reset();
}

std::vector<ip_address> parse_all(const std::vector<std::string>& texts) {
  std::vector<ip_address> out;
  for (auto& t : texts)
    if (auto a = parse_ip_address(t)) out.push_back(*a);
  return out;
}

// The addresses to connect to once the name passed: the literal itself, the test
// resolver's mapping, or what the loop resolved.
egress_answer decide(egress_proxy_state& st, const egress_ask& ask, std::vector<std::string>& checked) {
  egress_answer a;
  a.conn = ask.conn;
  if (!ask.resolved) {
    a.verdict = check_destination(st.lists, ask.host, ask.port);
    if (!a.verdict.allowed()) return a;
    if (parse_ip_address(ask.host)) {
      checked = {ask.host};
      a.next = egress_next::connect;
      a.addresses = checked;
      a.idle_timeout = st.lists.test_idle_timeout;
      return a;
    }
    if (st.lists.test_resolver.empty()) {
      a.next = egress_next::resolve;
      return a;
    }
    auto it = st.lists.test_resolver.find(normalized_host_name(ask.host));
    checked = it == st.lists.test_resolver.end() ? std::vector<std::string>{} : it->second;
  } else {
    checked = ask.addresses;
  }
  if (checked.empty()) {
    a.verdict = {egress_outcome::unresolved, a.verdict.rule,
                 ask.host + " could not be resolved" + (ask.resolve_error.empty() ? "" : ": " + ask.resolve_error)};
    return a;
  }
  a.verdict = check_resolved(st.lists, ask.host, ask.port, parse_all(checked));
  if (a.verdict.allowed()) {
    a.next = egress_next::connect;
    a.addresses = checked;
    a.idle_timeout = st.lists.test_idle_timeout;
  }
  return a;
}

} // namespace

caf::behavior egress_proxy(self_ptr self, egress_lists lists, io_loop* io, caf::actor live) {
  self->state.lists = std::move(lists);
  self->state.io = io;
  self->state.live = std::move(live);
  return {
      [=](egress_ask& ask) {
        auto& st = self->state;
        auto [it, fresh] = st.open.try_emplace(ask.conn);
        if (fresh) {
          it->second.began = clock::now();
          it->second.event.host = ask.host;
          it->second.event.port = ask.port;
          it->second.event.protocol = to_string(ask.protocol);
        }
        std::vector<std::string> checked;
        auto answer = decide(st, ask, checked);
        auto& ev = it->second.event;
        ev.addresses = checked;
        ev.rule = answer.verdict.rule;
        if (answer.next != egress_next::resolve) ev.decision = to_string(answer.verdict.outcome);
        if (answer.next == egress_next::refuse) {
          ev.reason = answer.verdict.reason;
          record(self, std::move(it->second));
          st.open.erase(it);
        }
        st.io->egress_answer(std::move(answer));
      },
      [=](egress_closed& closed) {
        auto& st = self->state;
        auto it = st.open.find(closed.conn);
        if (it == st.open.end()) return;  // refused: already recorded
        auto& ev = it->second.event;
        if (ev.decision.empty()) ev.decision = "abandoned";  // closed while it was being decided
        ev.bytes_up = closed.bytes_up;
        ev.bytes_down = closed.bytes_down;
        ev.failure = closed.failure;
        if (closed.failure.rfind("sni_mismatch", 0) == 0) ev.decision = "sni_mismatch";
        if (!closed.connected_to.empty()) {
          // The address actually connected to first, so the audit says where bytes went.
          std::erase(ev.addresses, closed.connected_to);
          ev.addresses.insert(ev.addresses.begin(), closed.connected_to);
        }
        record(self, std::move(it->second));
        st.open.erase(it);
        deliver_if_complete(self, false);
      },
      [=](audit_atom) -> caf::result<network_audit> {
        auto& st = self->state;
        if (st.open.empty()) return st.audit;
        st.waiting = self->make_response_promise<network_audit>();
        self->delayed_send(self, kAuditBound, audit_due_atom::value);
        return *st.waiting;
      },
      [=](audit_due_atom) { deliver_if_complete(self, true); },
  };
}

const char* to_string(egress_protocol p) {
  switch (p) {
    case egress_protocol::http_connect: return "http_connect";
    case egress_protocol::http_forward: return "http_forward";
    case egress_protocol::socks5: return "socks5";
  }
  return "unknown";
}

} // namespace corral
