#include "actors/sessions/stdio_session.hpp"

#include <atomic>
#include <deque>
#include <filesystem>
#include <optional>
#include <sys/wait.h>

#include <caf/all.hpp>

#include "tiers/scratch_dir.hpp"
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/lease_messages.hpp"
#include "actors/sessions/session_egress.hpp"
#include "actors/sessions/session_log.hpp"
#include "actors/sessions/session_state.hpp"

namespace corral {

namespace {

using clock_type = std::chrono::steady_clock;

// After the helper exits, a descendant that escaped may hold a pipe open; bounded as for
// executions.
constexpr std::chrono::milliseconds kEofBound{2000};
constexpr std::chrono::seconds kLeaseBound{30};

// The child's stdin, apart from the session's phase: a graceful close is an event in the
// input stream (EOF after everything sent before it), not the end of the session. Before
// this split a close that came while the lease was being acquired ended the session
// without starting the child, dropping the request sent just before it.
//
//   open ──close (owner EOF, idle)──▶ eof_queued ──EOF written after the queued input──▶ closed
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

// Far above the ids executions take, so the loop never confuses the two.
std::atomic<process_id> next_session_process{1ull << 48};

} // namespace

struct stdio_session_state {
  stdio_session_plan plan;
  session_env env;
  caf::actor owner;
  session_phase phase = session_phase::starting;
  caf::actor lease;
  lease_grant grant;
  process_id process = 0;
  long pid = 0;
  std::string isolation;
  std::optional<frame_decoder> decoder;

  // Output: decoded, not yet delivered (the owner lacks credit).
  std::deque<std::string> pending;
  std::size_t pending_bytes = 0;
  std::uint64_t owner_credit = 0;
  std::uint64_t read_outstanding = 0;  // credit given to the loop, not yet used
  std::uint64_t err_outstanding = 0;
  std::uint64_t messages_out = 0;

  // Input: bytes handed to the loop and not yet written, and the sends waiting on them.
  std::uint64_t in_flight = 0;
  std::deque<std::string> before_spawn;
  std::deque<caf::typed_response_promise<session_reply>> waiting_sends;
  std::uint64_t messages_in = 0;
  stdin_phase input = stdin_phase::open;

  session_log stderr_log;
  clock_type::time_point last_activity;
  std::optional<session_end_reason> reason;
  std::string detail;
  bool terminating = false;
  bool helper_reaped = false;
  bool out_eof = false;
  bool err_eof = false;
  bool finishing = false;
  bool lease_answered = false;
  std::optional<status_line> target_exit;
  clock_type::time_point last_output;
  int helper_wait_status = 0;
  session_egress egress;

  static inline const char* name = "stdio_session";
};

namespace {

using self_ptr = caf::stateful_actor<stdio_session_state>*;

// The first reason wins, except that a failed start outranks how the session was being
// ended: a close or an exit of a child that never ran must not read as success.
void set_reason(stdio_session_state& st, session_end_reason r, std::string detail = {}) {
  bool outranks = r == session_end_reason::failed && st.reason && *st.reason != session_end_reason::failed &&
                  st.target_exit == std::nullopt;
  if (st.reason && !outranks) return;
  st.reason = r;
  st.detail = std::move(detail);
}

void refuse_waiting(stdio_session_state& st, const std::string& why) {
  for (auto& rp : st.waiting_sends) rp.deliver(session_reply{false, make_failure(failure_kind::refused, why)});
  st.waiting_sends.clear();
}

void terminate(self_ptr self) {
  auto& st = self->state;
  if (st.terminating || !st.lease) return;
  st.terminating = true;
  self->send(st.lease, terminate_atom::value);
}

void report_end(self_ptr self, const lease_report& report) {
  auto& st = self->state;
  session_ended end;
  end.session = st.plan.number;
  end.reason = st.reason.value_or(session_end_reason::exited);
  end.detail = st.detail;
  if (st.target_exit) {
    int ws = st.target_exit->wait_status;
    if (WIFEXITED(ws)) end.exit_code = WEXITSTATUS(ws);
    if (WIFSIGNALED(ws)) end.term_signal = WTERMSIG(ws);
  } else if (st.helper_reaped && WIFSIGNALED(st.helper_wait_status)) {
    end.term_signal = WTERMSIG(st.helper_wait_status);
  }
  if (report.out_of_memory && end.detail.empty()) end.detail = "the memory limit's OOM killer fired";
  end.stderr_tail = st.stderr_log.contents();
  end.messages_out = st.messages_out;
  end.messages_in = st.messages_in;
  end.network = st.egress.take_audit();
  spdlog::info("session {} ended reason={} exit={} signal={} out={} in={}", st.plan.exec.id,
               to_string(end.reason), end.exit_code.value_or(-1), end.term_signal.value_or(0),
               end.messages_out, end.messages_in);
  st.phase = session_phase::closed;
  if (st.owner) self->send(st.owner, std::move(end));
  remove_scratch_dir(st.plan.exec.scratch_dir);
  self->quit();
}

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
    self->send(st.owner, session_message{st.plan.number, st.messages_out++, std::move(st.pending.front())});
    st.pending.pop_front();
  }
}

void finish_lease(self_ptr self) {
  auto& st = self->state;
  if (!st.lease) return report_end(self, lease_report{});
  self->request(st.lease, kLeaseBound, finish_atom::value)
      .then([=](lease_report& report) { report_end(self, report); },
            [=](caf::error& e) {
              set_reason(self->state, session_end_reason::failed,
                         "the lease did not finish: " + self->system().render(e));
              report_end(self, lease_report{});
            });
}

void maybe_finish(self_ptr self) {
  auto& st = self->state;
  if (st.finishing) return;
  bool spawned = st.process != 0;
  if (spawned && !(st.helper_reaped && st.out_eof && st.err_eof)) return;
  st.finishing = true;
  st.phase = session_phase::draining;
  if (spawned) st.env.io->release(st.process);
  refuse_waiting(st, "the session ended");
  // Nothing the child said is lost: what the owner had no credit for still comes, in
  // order, before the end (bounded by the output window).
  if (st.owner) deliver_pending(self, true);
  // The audit before the lease: the release closed the proxied connections, whose ends are
  // on their way to the proxy.
  st.egress.collect(self, [=] { finish_lease(self); });
}

// Posts EOF behind the input already written and starts the grace; before io_spawned the
// input still waits in before_spawn, so io_spawned does this after flushing it.
void send_eof(self_ptr self) {
  auto& st = self->state;
  if (st.input != stdin_phase::eof_queued || st.pid == 0) return;
  st.input = stdin_phase::closed;
  st.env.io->close_stdin(st.process);
  self->delayed_send(self, st.plan.options.close_grace, grace_atom::value);
}

// Ends the session: `graceful` closes stdin (after what was sent before) and waits the
// grace before terminating; otherwise the child is terminated now.
void begin_drain(self_ptr self, session_end_reason why, std::string detail, bool graceful) {
  auto& st = self->state;
  if (st.phase == session_phase::closed) return;
  if (graceful) {
    set_reason(st, why, std::move(detail));
    if (st.input == stdin_phase::open) st.input = stdin_phase::eof_queued;
    // Still starting: the child is launched all the same, so what was sent reaches it.
    if (st.phase == session_phase::starting) return;
    st.phase = session_phase::draining;
    if (st.input == stdin_phase::eof_queued) return send_eof(self);
    return;  // EOF went already: the grace (or the child's exit) ends it
  }
  set_reason(st, why, std::move(detail));
  st.phase = session_phase::draining;
  refuse_waiting(st, "the session is closing");
  if (st.process == 0) {
    // Not launched: a lease still being acquired is finished when it answers.
    if (st.lease_answered) maybe_finish(self);
    return;
  }
  terminate(self);
}

void regrant(self_ptr self) {
  auto& st = self->state;
  if (st.process == 0 || st.out_eof) return;
  std::uint64_t window = st.plan.options.output_window_bytes;
  std::uint64_t held = st.pending_bytes + st.read_outstanding;
  if (held >= window) return;
  // Re-grant in bulk, not per message: one loop wake-up per quarter window.
  if (window - held < window / 4 && st.read_outstanding > 0) return;
  st.read_outstanding += window - held;
  st.env.io->add_credit(st.process, stream_kind::out, window - held);
}

void on_output(self_ptr self, std::string& bytes) {
  auto& st = self->state;
  st.read_outstanding -= std::min<std::uint64_t>(st.read_outstanding, bytes.size());
  st.last_activity = st.last_output = clock_type::now();
  std::vector<decoded_frame> frames;
  st.decoder->feed(bytes, frames);
  for (auto& f : frames) {
    if (!f.error) {
      st.pending_bytes += f.message.size();
      st.pending.push_back(std::move(f.message));
      continue;
    }
    if (f.fatal) {
      deliver_pending(self, true);
      begin_drain(self, session_end_reason::failed, "the child's stdout: " + f.error->message, false);
      continue;
    }
    deliver_pending(self, true);  // keep the refusal in its place in the order
    if (st.owner) self->send(st.owner, session_refused{st.plan.number, *f.error});
  }
  deliver_pending(self, false);
  regrant(self);
}

void write_input(self_ptr self, std::string bytes) {
  auto& st = self->state;
  // Until io_spawned everything waits in one queue: a write posted between the launch and
  // the flush would overtake the ones queued before it.
  if (st.pid == 0) st.before_spawn.push_back(std::move(bytes));
  else st.env.io->write_stdin(st.process, std::move(bytes));
}

void launch(self_ptr self) {
  auto& st = self->state;
  st.process = next_session_process++;
  session_streams streams;
  streams.out = {self, st.plan.options.output_window_bytes, overflow_policy::pause};
  streams.err = {self, std::max<std::uint64_t>(1, st.plan.options.stderr_log_bytes), overflow_policy::pause};
  st.read_outstanding = streams.out.credit;
  st.err_outstanding = streams.err.credit;
  st.egress.start(self, st.plan.exec, st.env.io);
  auto launched = launch_session_child(st.env, st.plan.exec, st.grant, st.process, self, std::move(streams),
                                       st.egress.proxy());
  if (!launched) {
    st.process = 0;
    return begin_drain(self, session_end_reason::failed, launched.error().describe(), false);
  }
  st.isolation = launched->isolation;
}

} // namespace

caf::behavior stdio_session(self_ptr self, stdio_session_plan plan, session_env env, caf::actor owner) {
  auto& st = self->state;
  st.plan = std::move(plan);
  st.env = std::move(env);
  st.owner = std::move(owner);
  const auto& o = st.plan.options;
  st.decoder.emplace(o.framing, o.max_message_bytes);
  st.stderr_log = session_log(o.stderr_log_bytes);
  st.owner_credit = o.initial_credit;
  st.last_activity = clock_type::now();
  if (st.owner) self->monitor(st.owner);
  self->set_down_handler([=](caf::down_msg& down) {
    auto& s = self->state;
    if (down.source == s.lease) {
      s.lease = caf::actor{};
      s.terminating = true;
      set_reason(s, session_end_reason::failed, "the session's lease died");
      if (s.process != 0) s.env.io->signal(s.process, SIGKILL, true);
      return maybe_finish(self);
    }
    if (down.source == s.owner) {
      s.owner = caf::actor{};
      begin_drain(self, session_end_reason::cancelled, "the owner went away", false);
    }
  });

  st.lease = st.env.make_lease(st.plan.exec);
  self->monitor(st.lease);
  self->delayed_send(self, o.startup_timeout, startup_atom::value);
  if (o.lifetime > kNoDeadline) self->delayed_send(self, o.lifetime, lifetime_atom::value);
  if (o.idle_timeout > kNoDeadline) self->delayed_send(self, o.idle_timeout, idle_atom::value);
  self->request(st.lease, kLeaseBound, acquire_atom::value)
      .then(
          [=](lease_acquired& acquired) {
            auto& s = self->state;
            s.lease_answered = true;
            if (!acquired.ok) {
              set_reason(s, session_end_reason::failed, acquired.error.describe());
              s.phase = session_phase::draining;
              return maybe_finish(self);
            }
            s.grant = acquired.grant;
            // A graceful close while starting still launches: the input queued before it
            // must reach the child, then EOF.
            if (s.phase != session_phase::starting) return maybe_finish(self);
            launch(self);
          },
          [=](caf::error& e) {
            self->state.lease_answered = true;
            set_reason(self->state, session_end_reason::failed,
                       "acquiring the lease: " + self->system().render(e));
            maybe_finish(self);
          });

  return {
      [=](io_spawned& ev) {
        auto& s = self->state;
        if (ev.id != s.process) return;
        s.pid = ev.pid;
        self->send(s.lease, attach_atom::value, ev.id, ev.pid);
        for (auto& bytes : s.before_spawn) s.env.io->write_stdin(s.process, std::move(bytes));
        s.before_spawn.clear();
        if (s.phase == session_phase::starting) {
          s.phase = s.input == stdin_phase::open ? session_phase::running : session_phase::draining;
          s.last_activity = clock_type::now();
        }
        if (s.input == stdin_phase::eof_queued) send_eof(self);
        else if (s.phase == session_phase::draining) terminate(self);
      },
      [=](io_spawn_failed& ev) {
        auto& s = self->state;
        if (ev.id != s.process) return;
        s.process = 0;
        begin_drain(self, session_end_reason::failed, "starting the exec helper: " + ev.what, false);
        maybe_finish(self);
      },
      [=](io_status& ev) {
        auto& s = self->state;
        if (ev.id != s.process) return;
        if (ev.line.what == status_line::kind::failed)
          set_reason(s, session_end_reason::failed,
                     ev.line.name + ": " + ev.line.message + " (errno " + std::to_string(ev.line.error_number) + ")");
        if (ev.line.what == status_line::kind::exited) s.target_exit = ev.line;
      },
      [=](io_chunk& chunk) {
        auto& s = self->state;
        if (chunk.id != s.process) return;
        if (chunk.stream == stream_kind::out) return on_output(self, chunk.bytes);
        s.stderr_log.append(chunk.bytes);
        if (s.plan.options.forward_stderr && s.owner)
          self->send(s.owner, session_stderr{s.plan.number, chunk.bytes});
        s.err_outstanding -= std::min<std::uint64_t>(s.err_outstanding, chunk.bytes.size());
        // stderr is never the owner's to throttle: keep reading into the bounded log.
        if (!s.err_eof && s.err_outstanding == 0) {
          s.err_outstanding = std::max<std::uint64_t>(1, s.plan.options.stderr_log_bytes);
          s.env.io->add_credit(s.process, stream_kind::err, s.err_outstanding);
        }
      },
      [=](io_eof& ev) {
        auto& s = self->state;
        if (ev.id != s.process) return;
        (ev.stream == stream_kind::out ? s.out_eof : s.err_eof) = true;
        maybe_finish(self);
      },
      [=](io_exited& ev) {
        auto& s = self->state;
        if (ev.id != s.process) return;
        s.helper_reaped = true;
        s.helper_wait_status = ev.wait_status;
        // The child went on its own (or was terminated): whatever comes next is the end.
        set_reason(s, session_end_reason::exited);
        if (s.phase != session_phase::closed) s.phase = session_phase::draining;
        refuse_waiting(s, "the session's child exited");
        self->delayed_send(self, kEofBound, eof_wait_atom::value, ev.id);
        maybe_finish(self);
      },
      [=](eof_wait_atom, process_id id) {
        auto& s = self->state;
        if (id != s.process || (s.out_eof && s.err_eof)) return;
        // The bound is on a silent pipe (a descendant holding it open), not on a child's
        // last output still flowing or waiting for the owner's credit: that is drained.
        auto quiet = clock_type::now() - s.last_output;
        if (!s.out_eof && (quiet < kEofBound || !s.pending.empty() || s.read_outstanding == 0)) {
          auto wait = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(kEofBound - quiet),
                               std::chrono::milliseconds(100));
          return (void)self->delayed_send(self, wait, eof_wait_atom::value, id);
        }
        s.env.io->release(id);  // the loop then reports EOF on what was still open
      },
      [=](io_written& ev) {
        auto& s = self->state;
        if (ev.id != s.process) return;
        s.in_flight -= std::min(s.in_flight, ev.bytes);
        while (!s.waiting_sends.empty() && s.in_flight <= s.plan.options.input_window_bytes) {
          s.waiting_sends.front().deliver(session_reply{true, {}});
          s.waiting_sends.pop_front();
        }
      },
      [=](io_stdin_closed& ev) {
        auto& s = self->state;
        if (ev.id != s.process) return;
        s.input = stdin_phase::closed;
        if (ev.error_number != 0) refuse_waiting(s, "the child closed its stdin");
      },
      [=](send_atom, std::string& message) -> caf::result<session_reply> {
        auto& s = self->state;
        if (s.phase != session_phase::starting && s.phase != session_phase::running)
          return session_reply{false, make_failure(failure_kind::refused,
                                                   std::string("the session is ") + to_string(s.phase))};
        if (s.input != stdin_phase::open)
          return session_reply{false, make_failure(failure_kind::refused, "the child's stdin is closed")};
        auto framed = encode_frame(s.plan.options.framing, message, s.plan.options.max_message_bytes);
        if (!framed) return session_reply{false, framed.error()};
        s.in_flight += framed->size();
        ++s.messages_in;
        s.last_activity = clock_type::now();
        write_input(self, std::move(*framed));
        if (s.in_flight <= s.plan.options.input_window_bytes) return session_reply{true, {}};
        s.waiting_sends.push_back(self->make_response_promise<session_reply>());
        return s.waiting_sends.back();
      },
      [=](network_event& event) {
        // From the egress proxy, as each connection ends; outside the message credit.
        if (self->state.owner) self->send(self->state.owner, session_network{self->state.plan.number, std::move(event)});
      },
      [=](ack_atom, std::uint64_t n) {
        auto& s = self->state;
        s.owner_credit += n;
        deliver_pending(self, false);
        regrant(self);
      },
      [=](close_atom) { begin_drain(self, session_end_reason::closed, {}, true); },
      [=](cancel_atom) {
        // A second cancel (a second SIGINT to `corral mcp`) skips the grace, as an
        // execution's does.
        if (self->state.terminating && self->state.lease) return self->send(self->state.lease, escalate_atom::value);
        begin_drain(self, session_end_reason::cancelled, {}, false);
      },
      [=](grace_atom) {
        if (self->state.phase != session_phase::closed && !self->state.finishing) terminate(self);
      },
      [=](idle_atom) {
        auto& s = self->state;
        auto idle = s.plan.options.idle_timeout;
        // Still starting: the idle clock has not begun; look again later.
        if (s.phase == session_phase::starting) return (void)self->delayed_send(self, idle, idle_atom::value);
        if (s.phase != session_phase::running) return;
        auto quiet = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - s.last_activity);
        if (quiet >= idle) return begin_drain(self, session_end_reason::idle, {}, true);
        self->delayed_send(self, idle - quiet, idle_atom::value);
      },
      [=](lifetime_atom) {
        auto& s = self->state;
        if (s.phase == session_phase::closed) return;
        begin_drain(self, session_end_reason::lifetime, {}, false);
        terminate(self);  // also when a close was already draining
      },
      [=](startup_atom) {
        auto& s = self->state;
        if (s.phase != session_phase::starting) return;
        begin_drain(self, session_end_reason::failed,
                    "the session did not start within " + std::to_string(s.plan.options.startup_timeout.count()) + " ms",
                    false);
      },
      [=](info_atom) {
        auto& s = self->state;
        session_info i;
        i.session = s.plan.number;
        i.phase = s.phase;
        i.tier = s.plan.exec.boundary->name();
        i.isolation = s.isolation;
        i.pid = s.pid;
        i.messages_out = s.messages_out;
        i.messages_in = s.messages_in;
        i.buffered_bytes = s.pending_bytes + s.decoder->buffered() + s.in_flight;
        return i;
      },
  };
}

expected<stdio_session_plan> plan_stdio_session(const session_request& request, const std::string& id,
                                                std::uint64_t number, const planning_context& ctx) {
  if (request.max_message_bytes == 0 || request.output_window_bytes == 0 || request.input_window_bytes == 0)
    return make_failure(failure_kind::invalid_request, "the message limit and both windows must be positive");
  if (request.startup_timeout <= kNoDeadline)
    return make_failure(failure_kind::invalid_request, "the startup timeout must be positive");
  exec_request r;
  r.language = "argv";
  r.argv = request.argv;
  r.env = request.env;
  r.tier = request.tier;
  r.memory_limit_bytes = request.memory_limit_bytes;
  r.pids_limit = request.pids_limit;
  r.cpu_cores = request.cpu_cores;
  r.network_allow = request.network_allow;
  auto exec = plan_execution(r, id, ctx);
  if (!exec) return exec.error();
  return stdio_session_plan{std::move(*exec), request, number};
}

caf::actor spawn_stdio_session(caf::actor_system& system, stdio_session_plan plan, session_env env,
                               caf::actor owner) {
  return system.spawn(stdio_session, std::move(plan), std::move(env), std::move(owner));
}

} // namespace corral
