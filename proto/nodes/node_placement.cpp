#include "proto/nodes/node_placement.hpp"

#include <limits>
#include <map>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/execution_messages.hpp"

namespace corral {

namespace {

using clock_type = std::chrono::steady_clock;
using reconnect_atom = caf::atom_constant<caf::atom("reconnect")>;
using reached_atom = caf::atom_constant<caf::atom("reached")>;

struct tracked_node {
  placement_node node;  // node.reason: what made it unavailable (lost, or never reached)
  bool available = false;
  clock_type::time_point loaded_at;
  bool refreshing = false;
  std::size_t sent_since_load = 0;  // placed here after its last report
  std::size_t in_flight = 0;
  std::chrono::milliseconds retry_delay{0};  // before the next attempt to reach it
  bool reaching = false;                     // an attempt is scheduled or running
  std::string last_attempt;                  // why the last attempt failed
  std::uint64_t connection = 0;  // counts reconnections: a reply to an older one is stale
};

// What a caller is told about an unavailable node: the cause, the last attempt, the next.
std::string unavailable_reason(const tracked_node& n) {
  auto why = n.node.reason;
  if (!n.last_attempt.empty()) why += "; tried again: " + n.last_attempt;
  if (n.reaching) why += "; trying again within " + std::to_string(n.retry_delay.count()) + " ms";
  return why;
}

struct in_flight_exec {
  std::size_t node;
  caf::typed_response_promise<placed_outcome> reply;
};

struct placement_state {
  std::vector<tracked_node> nodes;
  std::chrono::milliseconds load_ttl{250};
  std::map<std::uint64_t, in_flight_exec> pending;
  std::uint64_t next_id = 1;
  std::size_t rotation = 0;  // breaks ties so equal nodes share the work
  reconnect_policy reconnect;
};

using self_ptr = caf::stateful_actor<placement_state>*;

double score(const tracked_node& n) {
  auto capacity = std::max<std::uint64_t>(n.node.load.capacity, 1);
  return static_cast<double>(n.node.load.running + n.node.load.queued + n.sent_since_load) /
         static_cast<double>(capacity);
}

// The least-loaded available node, or none.
std::optional<std::size_t> choose(placement_state& st) {
  std::optional<std::size_t> best;
  auto count = st.nodes.size();
  for (std::size_t k = 0; k < count; ++k) {
    auto i = (st.rotation + k) % count;
    if (!st.nodes[i].available) continue;
    if (!best || score(st.nodes[i]) < score(st.nodes[*best])) best = i;
  }
  ++st.rotation;
  return best;
}

failure no_node(const placement_state& st) {
  std::string why;
  for (auto& n : st.nodes) why += (why.empty() ? "" : "; ") + n.node.address.label() + ": " + unavailable_reason(n);
  return make_failure(failure_kind::tier_unavailable,
                      "no node is available (" + why + "); start a node or make one reachable: the pool keeps "
                      "trying them in the background");
}

void refresh_load(self_ptr self, std::size_t index) {
  auto& n = self->state.nodes[index];
  if (!n.available || n.refreshing || clock_type::now() - n.loaded_at < self->state.load_ttl) return;
  n.refreshing = true;
  auto connection = n.connection;
  self->request(n.node.handle, std::chrono::seconds(5), load_atom::value)
      .then(
          [=](node_load& load) {
            auto& m = self->state.nodes[index];
            if (m.connection != connection) return;  // the node was lost and reached again since
            m.refreshing = false;
            m.node.load = std::move(load);
            m.loaded_at = clock_type::now();
            m.sent_since_load = 0;
          },
          [=](caf::error&) {  // a lost node comes as a down message
            auto& m = self->state.nodes[index];
            if (m.connection == connection) m.refreshing = false;
          });
}

void finish(self_ptr self, std::uint64_t id, placed_outcome out) {
  auto& st = self->state;
  auto it = st.pending.find(id);
  if (it == st.pending.end()) return;  // already failed when its node went away
  auto& n = st.nodes[it->second.node];
  --n.in_flight;
  out.placed.node = n.node.address.label();
  out.placed.descriptor = n.node.load.descriptor;
  out.placed.digest = n.node.load.digest;
  it->second.reply.deliver(std::move(out));
  st.pending.erase(it);
}

// Tries the node again after its delay. The attempt blocks (TCP, TLS, CAF handshake, a
// load report), so it runs in an actor with a thread of its own and reports back.
void schedule_reach(self_ptr self, std::size_t index) {
  auto& n = self->state.nodes[index];
  if (n.reaching || n.retry_delay.count() <= 0) return;
  n.reaching = true;
  self->delayed_send(self, n.retry_delay, reconnect_atom::value, index);
}

void reach_in_background(caf::blocking_actor* self, node_address address, std::size_t index, caf::actor placement) {
  self->send(placement, reached_atom::value, index, reach_node(self->system(), address));
}

// An attempt's answer: the node is back, or it waits twice as long for the next one.
void reached(self_ptr self, std::size_t index, placement_node found) {
  auto& st = self->state;
  auto& n = st.nodes[index];
  n.reaching = false;
  if (!found.handle) {
    n.last_attempt = found.reason;
    n.retry_delay = std::min(n.retry_delay * 2, st.reconnect.max);
    schedule_reach(self, index);
    return;
  }
  n.node = std::move(found);
  n.last_attempt.clear();
  ++n.connection;
  n.refreshing = false;
  n.available = true;
  n.loaded_at = clock_type::now();
  n.sent_since_load = 0;
  self->monitor(n.node.handle);
}

failure lost_in_flight(const std::string& node, const std::string& how) {
  return make_failure(failure_kind::internal, "node " + node + " went away while running this execution (" + how +
                                                  "): it may have run, so corral did not run it again elsewhere");
}

void lose_node(self_ptr self, std::size_t index, const std::string& how) {
  auto& st = self->state;
  auto& n = st.nodes[index];
  n.available = false;
  n.node.reason = "lost: " + how;
  for (auto it = st.pending.begin(); it != st.pending.end();) {
    if (it->second.node != index) {
      ++it;
      continue;
    }
    it->second.reply.deliver(placed_outcome{false, lost_in_flight(n.node.address.label(), how), {}});
    it = st.pending.erase(it);
  }
  n.in_flight = 0;
  n.last_attempt.clear();
  n.retry_delay = st.reconnect.first;
  schedule_reach(self, index);
}

caf::behavior node_placement(self_ptr self, std::vector<placement_node> nodes, std::chrono::milliseconds load_ttl,
                             reconnect_policy reconnect) {
  auto& st = self->state;
  st.load_ttl = load_ttl;
  st.reconnect = reconnect;
  for (auto& n : nodes) {
    tracked_node t;
    t.available = static_cast<bool>(n.handle);
    t.loaded_at = clock_type::now();
    t.node = std::move(n);
    t.retry_delay = reconnect.first;
    if (t.available) self->monitor(t.node.handle);
    st.nodes.push_back(std::move(t));
  }
  for (std::size_t i = 0; i < st.nodes.size(); ++i)
    if (!st.nodes[i].available) schedule_reach(self, i);
  self->set_down_handler([=](caf::down_msg& down) {
    auto& nodes = self->state.nodes;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].available && nodes[i].node.handle.address() == down.source)
        lose_node(self, i, "stopped or disconnected: " + self->system().render(down.reason));
  });
  return {
      [=](exec_atom, exec_request& request) -> caf::result<placed_outcome> {
        auto& st = self->state;
        auto index = choose(st);
        if (!index) return placed_outcome{false, no_node(st), {}};
        auto& n = st.nodes[*index];
        ++n.sent_since_load;
        ++n.in_flight;
        auto id = st.next_id++;
        auto reply = self->make_response_promise<placed_outcome>();
        st.pending.emplace(id, in_flight_exec{*index, reply});
        request.live_output.reset();
        auto node_label = n.node.address.label();
        auto node_index = *index;
        auto connection = n.connection;
        self->request(n.node.handle, caf::infinite, exec_atom::value, std::move(request))
            .then([=](exec_outcome& o) { finish(self, id, placed_outcome{o.ok, std::move(o.error), {{}, {}, {}, std::move(o.result)}}); },
                  [=](caf::error& e) {
                    // The gateway answers every request with an exec_outcome, so an error
                    // means the node or its connection is gone: this execution fails, and
                    // no later one is placed there even before the down message arrives.
                    auto how = self->system().render(e);
                    finish(self, id, placed_outcome{false, lost_in_flight(node_label, how), {}});
                    auto& m = self->state.nodes[node_index];
                    if (m.available && m.connection == connection) lose_node(self, node_index, how);
                  });
        for (std::size_t i = 0; i < st.nodes.size(); ++i) refresh_load(self, i);
        return reply;
      },
      [=](reconnect_atom, std::size_t index) {
        auto& n = self->state.nodes[index];
        self->spawn(reach_in_background, n.node.address, index, caf::actor_cast<caf::actor>(self));
      },
      [=](reached_atom, std::size_t index, placement_node& found) { reached(self, index, std::move(found)); },
      [=](stats_atom) {
        std::vector<node_status> out;
        for (auto& n : self->state.nodes)
          out.push_back({n.node.address.label(), n.available, n.available ? "" : unavailable_reason(n), n.node.load, n.in_flight});
        return out;
      },
  };
}

} // namespace

caf::actor spawn_node_placement(caf::actor_system& sys, std::vector<placement_node> nodes,
                                std::chrono::milliseconds load_ttl, reconnect_policy reconnect) {
  return sys.spawn(node_placement, std::move(nodes), load_ttl, reconnect);
}

} // namespace corral
