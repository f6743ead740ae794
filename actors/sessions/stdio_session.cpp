#include "actors/sessions/stdio_session.hpp"

#include <deque>
#include <optional>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/child_exit.hpp"
#include "actors/mcp/session_gateway.hpp"
#include "actors/sessions/session_lifecycle.hpp"
#include "actors/sessions/session_log.hpp"

namespace corral {

namespace {

using clock_type = std::chrono::steady_clock;

// The child's stdin, apart from the session's phase: a graceful close is an event in the
// input stream (EOF after everything sent before it), not the end of the session. Before
// this split a close that came while the lease was being acquired ended the session
// without starting the child, dropping the request sent just before it.
//
//   open ──close (owner EOF, idle)──▶ eof_queued ──EOF written after the queued input──▶ closed
//   open ──stdin_eof──▶ eof_queued ──▶ closed, as above but without the grace: only the
//        input ends, the child runs on (a later close starts the grace then)
//   open ──the pipe broke / the child exited──▶ closed
//
// Event orders for a client that sends, then closes (all handled without loss):
//   close before the lease answers    eof_queued; the child is still launched, the queue
//                                     flushed at io_spawned, then EOF, then the grace
//   close between launch and spawned  the same, from io_spawned
//   close after io_spawned            EOF posted behind the writes already in the loop
//   child exits first                 draining; the close has nothing left to do
//   grace expires                     terminate; the output still drains to EOF
enum class stdin_phase : std::uint8_t { open, eof_queued, closed };

} // namespace

struct stdio_session_state : session_kind {
  using self_ptr = caf::stateful_actor<stdio_session_state>*;

  // CAF constructs the state with its actor.
  explicit stdio_session_state(self_ptr self) : self(self), child(self, *this, session_type::stdio) {}

  self_ptr self;
  session_lifecycle child;
  session_request options;
  caf::actor owner;
  std::optional<frame_decoder> decoder;

  // Output: decoded, not yet delivered (the owner lacks credit).
  std::deque<std::string> pending;
  std::size_t pending_bytes = 0;
  std::uint64_t owner_credit = 0;
  std::uint64_t read_outstanding = 0;  // credit given to the loop, not yet used
  std::uint64_t err_outstanding = 0;
  std::uint64_t messages_out = 0;
  clock_type::time_point last_output;

  // Whether EOF on stdin starts the grace (a close) or only ends the input (stdin_eof).
  bool grace_after_eof = true;
  bool grace_started = false;
  // Input: bytes handed to the loop and not yet written, and the sends waiting on them.
  std::uint64_t in_flight = 0;
  std::deque<caf::typed_response_promise<session_reply>> waiting_sends;
  std::uint64_t messages_in = 0;
  stdin_phase input = stdin_phase::open;

  session_log stderr_log;
  clock_type::time_point last_activity;

  // The MCP gateway (none: transparent). Relayed, the gate goes to the loop at io_spawned
  // and its decisions come back as io_relay_gate; otherwise send and on_output use it here.
  std::optional<session_gateway> gateway;

  // The loop relays the messages between the child and descriptors of this process.
  bool relayed() const { return options.relay_from_fd >= 0; }

  std::vector<caf::actor> peers() const override {
    if (!owner) return {};
    return {owner};
  }
  session_streams streams() override;
  void on_spawned() override;
  void on_ending() override { refuse_waiting("the session is closing"); }
  void on_child_exited() override { refuse_waiting("the session's child exited"); }
  void on_finishing() override;
  std::optional<std::chrono::milliseconds> eof_wait_more() override;
  void fill_end(session_ended& end, const lease_report& report) override;
  void fill_info(session_info& info) const override;

  void refuse_waiting(const std::string& why) {
    for (auto& rp : waiting_sends) rp.deliver(session_reply{false, make_failure(failure_kind::refused, why)});
    waiting_sends.clear();
  }

  static inline const char* name = "stdio_session";
};

namespace {

using self_ptr = stdio_session_state::self_ptr;

void deliver_pending(self_ptr self, bool regardless_of_credit) {
  auto& st = self->state;
  if (!st.owner) {  // nobody left to tell
    st.pending.clear();
    st.pending_bytes = 0;
    return;
  }
  while (!st.pending.empty() && (regardless_of_credit || st.owner_credit > 0)) {
    if (st.owner_credit > 0) --st.owner_credit;
    st.pending_bytes -= st.pending.front().size();
    self->send(st.owner, session_message{st.child.number(), st.messages_out++, std::move(st.pending.front())});
    st.pending.pop_front();
  }
}

// Frames and writes one message to the child's stdin; false (with why) when it cannot be.
std::optional<failure> write_to_child(self_ptr self, std::string_view message) {
  auto& st = self->state;
  auto framed = encode_frame(st.options.framing, message, st.options.max_message_bytes);
  if (!framed) return framed.error();
  st.in_flight += framed->size();
  ++st.messages_in;
  st.child.write_input(std::move(*framed));
  return std::nullopt;
}

// The gateway's decisions: every one to the audit files, and those the owner should hear
// (refusals, filtered listings, pin checks, warnings) to the owner. An audit that cannot
// be written ends the session: a gateway that cannot record does not decide.
void record_gate(self_ptr self, std::vector<mcp_decision>& decisions, std::vector<std::string>& warnings) {
  auto& st = self->state;
  session_gate told{st.child.number(), {}, std::move(warnings)};
  for (auto& d : decisions) {
    auto line = d.json_line();
    for (auto& log : st.gateway->audits)
      if (!log->append(line)) {
        st.child.end_now(session_end_reason::failed, "the MCP audit file: " + log->last_error());
        return;
      }
    if (d.decision != "forward") told.decisions.push_back(std::move(line));
  }
  if (st.owner && (!told.decisions.empty() || !told.warnings.empty())) self->send(st.owner, std::move(told));
}

// What the gateway let through goes to the child, what it answered or forwarded to the
// owner (in order, within the owner's credit like any message).
void apply_gate(self_ptr self, gate_output& out) {
  auto& st = self->state;
  for (auto& m : out.to_server)
    if (st.input == stdin_phase::open) (void)write_to_child(self, m);
  for (auto& m : out.to_client) {
    st.pending_bytes += m.size();
    st.pending.push_back(std::move(m));
  }
  record_gate(self, out.decisions, out.warnings);
}

void start_grace(self_ptr self) {
  auto& st = self->state;
  if (st.grace_started) return;
  st.grace_started = true;
  self->delayed_send(self, st.options.close_grace, grace_atom::value);
}

// Posts EOF behind the input already written and starts the grace; before io_spawned the
// input still waits in the lifecycle's queue, so io_spawned does this after flushing it.
void send_eof(self_ptr self) {
  auto& st = self->state;
  if (st.input != stdin_phase::eof_queued || !st.child.spawned()) return;
  st.input = stdin_phase::closed;
  st.child.io().close_stdin(st.child.process());
  if (st.grace_after_eof) start_grace(self);
}

// Ends the session gracefully: closes stdin (after what was sent before) and waits the
// grace before terminating.
void close_gracefully(self_ptr self, session_end_reason why) {
  auto& st = self->state;
  if (st.child.phase() == session_phase::closed) return;
  st.child.offer_reason(why);
  st.grace_after_eof = true;
  if (st.input == stdin_phase::open) st.input = stdin_phase::eof_queued;
  // Still starting: the child is launched all the same, so what was sent reaches it.
  if (st.child.phase() == session_phase::starting) return;
  st.child.begin_draining();
  send_eof(self);  // unless EOF went already: then the grace (or the child's exit) ends it
  if (st.input == stdin_phase::closed) start_grace(self);  // EOF went with stdin_eof: no grace yet
}

void regrant(self_ptr self) {
  auto& st = self->state;
  if (st.relayed() || !st.child.launched() || st.child.at_eof(stream_kind::out)) return;
  std::uint64_t window = st.options.output_window_bytes;
  std::uint64_t held = st.pending_bytes + st.read_outstanding;
  if (held >= window) return;
  // Re-grant in bulk, not per message: one loop wake-up per quarter window.
  if (window - held < window / 4 && st.read_outstanding > 0) return;
  st.read_outstanding += window - held;
  st.child.io().add_credit(st.child.process(), stream_kind::out, window - held);
}

void on_output(self_ptr self, std::string& bytes) {
  auto& st = self->state;
  st.read_outstanding -= std::min<std::uint64_t>(st.read_outstanding, bytes.size());
  st.last_activity = st.last_output = clock_type::now();
  std::vector<decoded_frame> frames;
  st.decoder->feed(bytes, frames);
  for (auto& f : frames) {
    if (!f.error && st.gateway) {
      gate_output out;
      st.gateway->gate->from_server(std::move(f.message), clock_type::now(), out);
      apply_gate(self, out);
      continue;
    }
    if (!f.error) {
      st.pending_bytes += f.message.size();
      st.pending.push_back(std::move(f.message));
      continue;
    }
    if (f.fatal) {
      deliver_pending(self, true);
      st.child.end_now(session_end_reason::failed, "the child's stdout: " + f.error->message);
      continue;
    }
    deliver_pending(self, true);  // keep the refusal in its place in the order
    if (st.owner) self->send(st.owner, session_refused{st.child.number(), *f.error});
  }
  deliver_pending(self, false);
  regrant(self);
}

void on_stderr(self_ptr self, std::string& bytes) {
  auto& st = self->state;
  st.stderr_log.append(bytes);
  if (st.options.forward_stderr && st.owner) self->send(st.owner, session_stderr{st.child.number(), bytes});
  st.err_outstanding -= std::min<std::uint64_t>(st.err_outstanding, bytes.size());
  // stderr is never the owner's to throttle: keep reading into the bounded log.
  if (!st.child.at_eof(stream_kind::err) && st.err_outstanding == 0) {
    st.err_outstanding = std::max<std::uint64_t>(1, st.options.stderr_log_bytes);
    st.child.io().add_credit(st.child.process(), stream_kind::err, st.err_outstanding);
  }
}

} // namespace

session_streams stdio_session_state::streams() {
  session_streams s;
  // Relayed: nothing is read until the relay starts at io_spawned, then the loop paces it.
  s.out = {self, relayed() ? 0 : options.output_window_bytes, overflow_policy::pause};
  s.err = {self, std::max<std::uint64_t>(1, options.stderr_log_bytes), overflow_policy::pause};
  read_outstanding = s.out.credit;
  err_outstanding = s.err.credit;
  return s;
}

void stdio_session_state::on_spawned() {
  last_activity = clock_type::now();
  if (relayed())
    child.io().relay(child.process(), relay_ends{options.relay_from_fd, options.relay_to_fd, options.max_message_bytes,
                                                 options.output_window_bytes, self,
                                                 gateway ? std::move(gateway->gate) : nullptr});
  if (input == stdin_phase::eof_queued) {
    // Closed while starting: draining from here, EOF behind the input just flushed. Only
    // the input ended (stdin_eof): EOF, and the child runs on.
    if (grace_after_eof) child.begin_draining();
    return send_eof(self);
  }
  if (child.phase() == session_phase::draining) child.terminate();
}

void stdio_session_state::on_finishing() {
  refuse_waiting("the session ended");
  // Nothing the child said is lost: what the owner had no credit for still comes, in
  // order, before the end (bounded by the output window).
  deliver_pending(self, true);
}

std::optional<std::chrono::milliseconds> stdio_session_state::eof_wait_more() {
  // The bound is on a silent pipe (a descendant holding it open), not on a child's last
  // output still flowing or waiting for the owner's credit: that is drained.
  auto quiet = clock_type::now() - last_output;
  bool reading = read_outstanding != 0 || relayed();
  if (child.at_eof(stream_kind::out) || (quiet >= kEofBound && pending.empty() && reading))
    return std::nullopt;
  return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(kEofBound - quiet),
                  std::chrono::milliseconds(100));
}

void stdio_session_state::fill_end(session_ended& end, const lease_report& report) {
  if (report.out_of_memory && end.detail.empty()) end.detail = "the memory limit's OOM killer fired";
  end.stderr_tail = stderr_log.contents();
  end.messages_out = messages_out;
  end.messages_in = messages_in;
}

void stdio_session_state::fill_info(session_info& info) const {
  info.messages_out = messages_out;
  info.messages_in = messages_in;
  info.buffered_bytes = pending_bytes + decoder->buffered() + in_flight;
}

namespace {

caf::behavior stdio_session(self_ptr self, execution_plan exec, session_request options, std::uint64_t number,
                            session_env env, caf::actor owner, std::optional<session_gateway> gateway) {
  auto& st = self->state;
  st.gateway = std::move(gateway);
  st.options = std::move(options);
  st.owner = std::move(owner);
  const auto& o = st.options;
  st.decoder.emplace(o.framing, o.max_message_bytes);
  st.stderr_log = session_log(o.stderr_log_bytes);
  st.owner_credit = o.initial_credit;
  st.last_activity = clock_type::now();
  if (st.owner) self->monitor(st.owner);
  self->set_down_handler([=](caf::down_msg& down) {
    auto& s = self->state;
    if (s.child.handle_down(down)) return;
    if (down.source == s.owner) {
      s.owner = caf::actor{};
      s.child.end_now(session_end_reason::cancelled, "the owner went away");
    }
  });
  st.child.start(std::move(exec), number, std::move(env), o.startup_timeout, o.lifetime, true);
  if (o.idle_timeout > kNoDeadline) self->delayed_send(self, o.idle_timeout, idle_atom::value);

  return st.child.handlers().or_else(
      [=](io_chunk& chunk) {
        if (chunk.id != self->state.child.process()) return;
        if (chunk.stream == stream_kind::out) return on_output(self, chunk.bytes);
        on_stderr(self, chunk.bytes);
      },
      [=](io_relay_activity& ev) {
        auto& s = self->state;
        if (ev.id != s.child.process()) return;
        if (ev.messages_out != s.messages_out) s.last_output = clock_type::now();
        s.messages_in = ev.messages_in;
        s.messages_out = ev.messages_out;
        s.last_activity = clock_type::now();
      },
      [=](io_relay_refused& ev) {
        auto& s = self->state;
        if (ev.id != s.child.process() || !s.owner) return;
        auto why = std::string(ev.toward_child ? "from the client: " : "from the child: ") + ev.why;
        self->send(s.owner, session_refused{s.child.number(), make_failure(failure_kind::limit_exceeded, why)});
      },
      [=](io_relay_gate& ev) {
        auto& s = self->state;
        if (ev.id == s.child.process() && s.gateway) record_gate(self, ev.decisions, ev.warnings);
      },
      [=](io_relay_closed& ev) {
        // The client's input ended, or it stopped reading: as a close by the owner.
        if (ev.id == self->state.child.process()) close_gracefully(self, session_end_reason::closed);
      },
      [=](io_written& ev) {
        auto& s = self->state;
        if (ev.id != s.child.process()) return;
        s.in_flight -= std::min(s.in_flight, ev.bytes);
        while (!s.waiting_sends.empty() && s.in_flight <= s.options.input_window_bytes) {
          s.waiting_sends.front().deliver(session_reply{true, {}});
          s.waiting_sends.pop_front();
        }
      },
      [=](io_stdin_closed& ev) {
        auto& s = self->state;
        if (ev.id != s.child.process()) return;
        s.input = stdin_phase::closed;
        if (ev.error_number != 0) s.refuse_waiting("the child closed its stdin");
      },
      [=](send_atom, std::string& message) -> caf::result<session_reply> {
        auto& s = self->state;
        auto phase = s.child.phase();
        if (phase != session_phase::starting && phase != session_phase::running)
          return session_reply{false,
                               make_failure(failure_kind::refused, std::string("the session is ") + to_string(phase))};
        if (s.input != stdin_phase::open)
          return session_reply{false, make_failure(failure_kind::refused, "the child's stdin is closed")};
        s.last_activity = clock_type::now();
        if (s.gateway && s.gateway->gate) {  // relayed, the gate is the loop's and sends do not come
          // Checked first: a refusal is answered to the owner, and only what passes is framed.
          auto framed = encode_frame(s.options.framing, message, s.options.max_message_bytes);
          if (!framed) return session_reply{false, framed.error()};
          gate_output out;
          s.gateway->gate->from_client(std::move(message), clock_type::now(), out);
          apply_gate(self, out);
          deliver_pending(self, false);
        } else if (auto refused = write_to_child(self, message)) {
          return session_reply{false, *refused};
        }
        if (s.in_flight <= s.options.input_window_bytes) return session_reply{true, {}};
        s.waiting_sends.push_back(self->make_response_promise<session_reply>());
        return s.waiting_sends.back();
      },
      [=](ack_atom, std::uint64_t n) {
        self->state.owner_credit += n;
        deliver_pending(self, false);
        regrant(self);
      },
      [=](close_atom) { close_gracefully(self, session_end_reason::closed); },
      [=](stdin_eof_atom) {
        auto& s = self->state;
        if (s.child.phase() == session_phase::closed || s.input != stdin_phase::open) return;
        s.grace_after_eof = false;
        s.input = stdin_phase::eof_queued;
        send_eof(self);  // before io_spawned: on_spawned sends it after the queued input
      },
      [=](grace_atom) {
        auto& s = self->state;
        if (s.child.phase() != session_phase::closed && !s.child.ending_started()) s.child.terminate();
      },
      [=](idle_atom) {
        auto& s = self->state;
        auto idle = s.options.idle_timeout;
        // Still starting: the idle clock has not begun; look again later.
        if (s.child.phase() == session_phase::starting) return (void)self->delayed_send(self, idle, idle_atom::value);
        if (s.child.phase() != session_phase::running) return;
        auto quiet = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - s.last_activity);
        if (quiet >= idle) return close_gracefully(self, session_end_reason::idle);
        self->delayed_send(self, idle - quiet, idle_atom::value);
      });
}

} // namespace

expected<caf::actor> open_session(caf::actor_system& system, const session_request& request, session_opening at,
                                  caf::actor owner) {
  if (request.max_message_bytes == 0 || request.output_window_bytes == 0 || request.input_window_bytes == 0)
    return make_failure(failure_kind::invalid_request, "the message limit and both windows must be positive");
  if ((request.relay_from_fd >= 0) != (request.relay_to_fd >= 0) ||
      (request.relay_from_fd >= 0 && request.framing != framing_mode::newline))
    return make_failure(failure_kind::invalid_request, "a relayed session needs both descriptors and newline framing");
  auto exec = plan_session_child(request, request.argv, request.env, at);
  if (!exec) return exec.error();
  std::optional<session_gateway> gateway;
  if (at.ctx.prof) {
    auto opened = open_gateway(*at.ctx.prof, request.mcp, exec->work_dir, exec->boundary && exec->boundary->name() == "host");
    if (!opened) return opened.error();
    gateway = std::move(*opened);
  }
  return system.spawn(stdio_session, std::move(*exec), request, at.number, std::move(at.env), std::move(owner),
                      std::move(gateway));
}

} // namespace corral
