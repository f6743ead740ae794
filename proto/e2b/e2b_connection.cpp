#include "proto/e2b/e2b_connection.hpp"

#include <deque>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "proto/e2b/e2b_gateway.hpp"
#include "proto/e2b/e2b_json.hpp"
#include "proto/e2b/e2b_messages.hpp"
#include "proto/http/connect_envelope.hpp"
#include "proto/http/http_events.hpp"

namespace corral {

namespace {

// Unwritten bytes past which the process's events wait for the socket.
constexpr std::uint64_t kWriteWindow = 256 * 1024;
// A file transfer answers within this; a stream call is answered (subscribed) at once.
constexpr auto kCallBound = std::chrono::minutes(10);
constexpr auto kDefaultPing = std::chrono::seconds(50);

enum class connection_phase : std::uint8_t { idle, answering, streaming };

struct connection_state {
  connection_state() = default;  // CAF 0.17 would build an aggregate from the actor pointer
  std::shared_ptr<http_loop> loop;
  std::uint64_t id = 0;
  caf::actor gateway;
  connection_phase phase = connection_phase::idle;
  std::deque<http_request> waiting;
  bool close_after = false;  // the current request said Connection: close
  // The current stream.
  bool head_written = false;
  std::uint64_t unwritten = 0;
  std::uint64_t unacked_events = 0;
  caf::actor_addr events_from;
  std::uint64_t stream_number = 0;  // a ping names the stream it was set for
  std::chrono::seconds ping{kDefaultPing};
  std::string ping_json;  // a process stream's keepalive event, or a watch's
};

using self_ptr = caf::stateful_actor<connection_state>*;

void next(self_ptr self);

void send_bytes(self_ptr self, std::string bytes) {
  auto& st = self->state;
  st.unwritten += bytes.size();
  st.loop->write(st.id, std::move(bytes));
}

void response_done(self_ptr self) {
  auto& st = self->state;
  st.phase = connection_phase::idle;
  if (st.close_after) {
    st.loop->close(st.id);
    st.waiting.clear();
    return;
  }
  next(self);
}

void ensure_head(self_ptr self) {
  auto& st = self->state;
  if (st.head_written) return;
  st.head_written = true;
  send_bytes(self, stream_head(200, {{"Content-Type", "application/connect+json"}}));
}

void end_stream(self_ptr self, const std::string& end_json) {
  auto& st = self->state;
  if (st.phase != connection_phase::streaming) return;
  ensure_head(self);
  send_bytes(self, chunk(envelope(end_json, true)) + last_chunk());
  // The process that fed this stream hears nothing more from it.
  if (st.events_from) self->demonitor(st.events_from);
  st.events_from = {};
  ++st.stream_number;
  response_done(self);
}

// Acknowledges the events written so far once the socket has taken most of them.
void ack_events(self_ptr self) {
  auto& st = self->state;
  if (st.unacked_events == 0 || st.unwritten > kWriteWindow || !st.events_from) return;
  self->send(caf::actor_cast<caf::actor>(st.events_from), ack_atom::value, st.unacked_events);
  st.unacked_events = 0;
}

void schedule_ping(self_ptr self) {
  auto& st = self->state;
  self->delayed_send(self, st.ping, e2b_ping_atom::value, st.stream_number);
}

std::chrono::seconds ping_interval(const http_request& r) {
  if (auto* h = r.header("keepalive-ping-interval")) {
    try {
      return std::chrono::seconds(std::clamp(std::stol(*h), 1L, 300L));
    } catch (const std::exception&) {
    }
  }
  return kDefaultPing;
}

void start(self_ptr self, http_request r) {
  auto& st = self->state;
  st.close_after = !r.keep_alive;
  if (is_stream_call(r.path)) {
    st.phase = connection_phase::streaming;
    st.head_written = false;
    st.unacked_events = 0;
    st.ping = ping_interval(r);
    st.ping_json = r.path == "/filesystem.Filesystem/WatchDir" ? R"({"keepalive":{}})" : R"({"event":{"keepalive":{}}})";
    schedule_ping(self);
    auto number = st.stream_number;
    self->request(st.gateway, kCallBound, e2b_call_atom::value, std::move(r))
        .then(
            [=](http_response& h) {
              // Subscribed: the process's events carry the stream. Else the call failed:
              // a stream answers its failure in its end frame, with status 200.
              if (h.status == kSubscribedStatus || self->state.stream_number != number) return;
              auto body = nlohmann::json::parse(h.body, nullptr, false);
              auto text = [&](const char* key, std::string fallback) {
                return body.is_object() && body.contains(key) && body[key].is_string() ? body[key].get<std::string>()
                                                                                       : fallback;
              };
              // A control-plane shaped failure (a sandbox not running: 502) has a numeric code.
              std::string code = h.status == 502 ? "unavailable" : text("code", "unavailable");
              std::string message = text("message", h.body);
              end_stream(self, stream_end(code, message));
            },
            [=](caf::error& e) {
              if (self->state.stream_number == number) end_stream(self, stream_end("internal", self->system().render(e)));
            });
    return;
  }
  st.phase = connection_phase::answering;
  self->request(st.gateway, kCallBound, e2b_call_atom::value, std::move(r))
      .then(
          [=](http_response& h) {
            if (self->state.phase != connection_phase::answering) return;
            send_bytes(self, serialize(h));
            response_done(self);
          },
          [=](caf::error& e) {
            if (self->state.phase != connection_phase::answering) return;
            send_bytes(self, serialize(control_error(500, "the gateway did not answer: " + self->system().render(e))));
            response_done(self);
          });
}

void next(self_ptr self) {
  auto& st = self->state;
  if (st.phase != connection_phase::idle || st.waiting.empty()) return;
  auto r = std::move(st.waiting.front());
  st.waiting.pop_front();
  start(self, std::move(r));
}

caf::behavior e2b_connection(self_ptr self, std::shared_ptr<http_loop> loop, std::uint64_t id, caf::actor gateway) {
  auto& st = self->state;
  st.loop = std::move(loop);
  st.id = id;
  st.gateway = std::move(gateway);
  // The process feeding a stream went without its end frame (it cannot: it always sends
  // one; this is the bound on a bug).
  self->set_down_handler([=](caf::down_msg& d) {
    if (d.source == self->state.events_from) end_stream(self, stream_end("internal", "the process ended unreported"));
  });
  return {
      [=](http_request& r) {
        self->state.waiting.push_back(std::move(r));
        next(self);
      },
      [=](e2b_event& e) {
        auto& s = self->state;
        auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
        if (s.phase != connection_phase::streaming) {
          // A stream that ended here already (its client went on): the process is told so.
          self->send(caf::actor_cast<caf::actor>(from), ack_atom::value, std::uint64_t{1});
          return;
        }
        if (!s.events_from) {
          s.events_from = from;
          self->monitor(caf::actor_cast<caf::actor>(from));
        }
        ensure_head(self);
        send_bytes(self, chunk(envelope(e.json)));
        ++s.unacked_events;
        ack_events(self);
      },
      [=](e2b_stream_end& e) {
        auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
        if (from == self->state.events_from || !self->state.events_from) end_stream(self, e.json);
      },
      [=](e2b_ping_atom, std::uint64_t number) {
        auto& s = self->state;
        if (s.phase != connection_phase::streaming || s.stream_number != number) return;
        ensure_head(self);
        send_bytes(self, chunk(envelope(s.ping_json)));
        schedule_ping(self);
      },
      [=](http_written& w) {
        auto& s = self->state;
        s.unwritten -= std::min(s.unwritten, w.bytes);
        ack_events(self);
      },
      [=](http_closed&) { self->quit(); },
  };
}

} // namespace

caf::actor spawn_e2b_connection(caf::actor_system& system, std::shared_ptr<http_loop> loop, std::uint64_t id,
                                caf::actor gateway) {
  return system.spawn(e2b_connection, std::move(loop), id, std::move(gateway));
}

} // namespace corral
