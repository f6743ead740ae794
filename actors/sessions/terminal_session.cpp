#include "actors/sessions/terminal_session.hpp"

#include <atomic>
#include <deque>
#include <filesystem>
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

constexpr std::chrono::milliseconds kEofBound{2000};
constexpr std::chrono::seconds kLeaseBound{30};
// Read ahead of the actor: a terminal is consumed at once into the scrollback, so this only
// bounds what one burst of output costs.
constexpr std::uint64_t kReadWindow = 64 * 1024;

// Beside the stdio sessions' range (1 << 48), far above the executions' ids.
std::atomic<process_id> next_terminal_process{(1ull << 48) + (1ull << 40)};

} // namespace

struct terminal_session_state {
  terminal_session_plan plan;
  session_env env;
  session_phase phase = session_phase::starting;
  caf::actor lease;
  bool lease_answered = false;
  lease_grant grant;
  process_id process = 0;
  long pid = 0;
  std::string isolation;
  caf::actor client;  // the attached one, if any
  session_log scrollback;
  std::deque<std::string> before_spawn;
  std::uint64_t read_outstanding = 0;
  std::uint64_t inputs = 0;
  std::optional<session_end_reason> reason;
  std::string detail;
  bool terminating = false;
  bool helper_reaped = false;
  bool out_eof = false;
  bool finishing = false;
  std::optional<status_line> target_exit;
  int helper_wait_status = 0;
  session_egress egress;

  static inline const char* name = "terminal_session";
};

namespace {

using self_ptr = caf::stateful_actor<terminal_session_state>*;

void set_reason(terminal_session_state& st, session_end_reason r, std::string detail = {}) {
  if (st.reason) return;
  st.reason = r;
  st.detail = std::move(detail);
}

void terminate(self_ptr self) {
  auto& st = self->state;
  if (st.terminating || !st.lease) return;
  st.terminating = true;
  self->send(st.lease, terminate_atom::value);
}

void report_end(self_ptr self) {
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
  auto tail = st.scrollback.contents();
  end.stderr_tail = tail.size() > 4096 ? tail.substr(tail.size() - 4096) : tail;
  end.messages_in = st.inputs;
  end.network = st.egress.take_audit();
  spdlog::info("terminal {} ended reason={} exit={} signal={}", st.plan.exec.id, to_string(end.reason),
               end.exit_code.value_or(-1), end.term_signal.value_or(0));
  st.phase = session_phase::closed;
  if (st.client) self->send(st.client, std::move(end));
  remove_scratch_dir(st.plan.exec.scratch_dir);
  self->quit();
}

void finish_lease(self_ptr self) {
  auto& st = self->state;
  if (!st.lease) return report_end(self);
  self->request(st.lease, kLeaseBound, finish_atom::value)
      .then([=](lease_report&) { report_end(self); },
            [=](caf::error& e) {
              set_reason(self->state, session_end_reason::failed, "the lease did not finish: " + self->system().render(e));
              report_end(self);
            });
}

void maybe_finish(self_ptr self) {
  auto& st = self->state;
  if (st.finishing) return;
  bool launched = st.process != 0;
  if (launched && !(st.helper_reaped && st.out_eof)) return;
  st.finishing = true;
  st.phase = session_phase::draining;
  if (launched) st.env.io->release(st.process);
  // The audit before the lease, as for stdio sessions (actors/sessions/session_egress.hpp).
  st.egress.collect(self, [=] { finish_lease(self); });
}

void end_now(self_ptr self, session_end_reason why, std::string detail) {
  auto& st = self->state;
  if (st.phase == session_phase::closed) return;
  set_reason(st, why, std::move(detail));
  st.phase = session_phase::draining;
  if (st.process == 0) {
    if (st.lease_answered) maybe_finish(self);
    return;
  }
  terminate(self);
}

void launch(self_ptr self) {
  auto& st = self->state;
  st.process = next_terminal_process++;
  const auto& o = st.plan.options;
  session_streams streams;
  streams.out = {self, kReadWindow, overflow_policy::pause};
  streams.err = {self, 0, overflow_policy::pause};  // unused: the pty carries stderr too
  streams.pty = {true, o.rows, o.cols, o.echo};
  st.read_outstanding = kReadWindow;
  st.egress.start(self, st.plan.exec, st.env.io);
  auto launched = launch_session_child(st.env, st.plan.exec, st.grant, st.process, self, std::move(streams),
                                       st.egress.proxy());
  if (!launched) {
    st.process = 0;
    return end_now(self, session_end_reason::failed, launched.error().describe());
  }
  st.isolation = launched->isolation;
}

} // namespace

caf::behavior terminal_session(self_ptr self, terminal_session_plan plan, session_env env) {
  auto& st = self->state;
  st.plan = std::move(plan);
  st.env = std::move(env);
  st.scrollback = session_log(st.plan.options.scrollback_bytes);
  self->set_down_handler([=](caf::down_msg& down) {
    auto& s = self->state;
    if (down.source == s.lease) {
      s.lease = caf::actor{};
      s.terminating = true;
      set_reason(s, session_end_reason::failed, "the terminal's lease died");
      if (s.process != 0) s.env.io->signal(s.process, SIGKILL, true);
      return maybe_finish(self);
    }
    // A client that goes away only detaches: the terminal outlives it.
    if (s.client && down.source == s.client.address()) s.client = caf::actor{};
  });
  st.lease = st.env.make_lease(st.plan.exec);
  self->monitor(st.lease);
  self->delayed_send(self, st.plan.options.startup_timeout, startup_atom::value);
  if (st.plan.options.lifetime > kNoDeadline) self->delayed_send(self, st.plan.options.lifetime, lifetime_atom::value);
  self->request(st.lease, kLeaseBound, acquire_atom::value)
      .then(
          [=](lease_acquired& acquired) {
            auto& s = self->state;
            s.lease_answered = true;
            if (!acquired.ok) {
              set_reason(s, session_end_reason::failed, acquired.error.describe());
              return maybe_finish(self);
            }
            s.grant = acquired.grant;
            if (s.reason) return maybe_finish(self);
            launch(self);
          },
          [=](caf::error& e) {
            self->state.lease_answered = true;
            set_reason(self->state, session_end_reason::failed, "acquiring the lease: " + self->system().render(e));
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
        if (s.phase == session_phase::starting) s.phase = session_phase::running;
        if (s.reason) terminate(self);
      },
      [=](io_spawn_failed& ev) {
        auto& s = self->state;
        if (ev.id != s.process) return;
        s.process = 0;
        end_now(self, session_end_reason::failed, "starting the exec helper: " + ev.what);
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
        if (chunk.id != s.process || chunk.stream != stream_kind::out) return;
        s.scrollback.append(chunk.bytes);
        s.read_outstanding -= std::min<std::uint64_t>(s.read_outstanding, chunk.bytes.size());
        if (s.read_outstanding < kReadWindow / 2 && !s.out_eof) {
          s.env.io->add_credit(s.process, stream_kind::out, kReadWindow - s.read_outstanding);
          s.read_outstanding = kReadWindow;
        }
        if (s.client) self->send(s.client, terminal_output{s.plan.number, std::move(chunk.bytes)});
      },
      [=](io_eof& ev) {
        auto& s = self->state;
        if (ev.id != s.process || ev.stream != stream_kind::out) return;
        s.out_eof = true;
        maybe_finish(self);
      },
      [=](io_exited& ev) {
        auto& s = self->state;
        if (ev.id != s.process) return;
        s.helper_reaped = true;
        s.helper_wait_status = ev.wait_status;
        set_reason(s, session_end_reason::exited);
        s.phase = session_phase::draining;
        self->delayed_send(self, kEofBound, eof_wait_atom::value, ev.id);
        maybe_finish(self);
      },
      [=](eof_wait_atom, process_id id) {
        auto& s = self->state;
        if (id == s.process && !s.out_eof) s.env.io->release(id);
      },
      [=](network_event& event) {
        // From the egress proxy, as each connection ends: to the attached client only (the
        // whole audit is in session_ended).
        if (self->state.client)
          self->send(self->state.client, session_network{self->state.plan.number, std::move(event)});
      },
      [=](io_written&) {},
      [=](io_stdin_closed&) {},
      [=](reattach_atom, caf::actor& client) -> std::string {
        auto& s = self->state;
        if (s.client && s.client != client) self->demonitor(s.client);
        s.client = client;
        if (client) self->monitor(client);
        return s.scrollback.contents();
      },
      [=](detach_atom) {
        auto& s = self->state;
        if (s.client) self->demonitor(s.client);
        s.client = caf::actor{};
      },
      [=](input_atom, std::string& bytes) {
        auto& s = self->state;
        if (s.phase != session_phase::starting && s.phase != session_phase::running) return;
        ++s.inputs;
        if (s.pid == 0) s.before_spawn.push_back(std::move(bytes));
        else s.env.io->write_stdin(s.process, std::move(bytes));
      },
      [=](resize_atom, std::uint16_t rows, std::uint16_t cols) {
        auto& s = self->state;
        if (s.process != 0) s.env.io->resize(s.process, rows, cols);
      },
      [=](cancel_atom) {
        // A second cancel (a second SIGINT to `corral shell`) skips the grace.
        if (self->state.terminating && self->state.lease) return self->send(self->state.lease, escalate_atom::value);
        end_now(self, session_end_reason::cancelled, {});
      },
      [=](lifetime_atom) { end_now(self, session_end_reason::lifetime, {}); },
      [=](startup_atom) {
        auto& s = self->state;
        if (s.phase != session_phase::starting) return;
        end_now(self, session_end_reason::failed,
                "the terminal did not start within " + std::to_string(s.plan.options.startup_timeout.count()) + " ms");
      },
      [=](info_atom) {
        auto& s = self->state;
        session_info i;
        i.session = s.plan.number;
        i.phase = s.phase;
        i.tier = s.plan.exec.boundary->name();
        i.isolation = s.isolation;
        i.pid = s.pid;
        i.messages_in = s.inputs;
        i.buffered_bytes = s.scrollback.contents().size();
        return i;
      },
  };
}

expected<terminal_session_plan> plan_terminal_session(const terminal_request& request, const std::string& id,
                                                      std::uint64_t number, const planning_context& ctx) {
  if (request.rows == 0 || request.cols == 0)
    return make_failure(failure_kind::invalid_request, "a terminal needs at least one row and one column");
  if (request.startup_timeout <= kNoDeadline)
    return make_failure(failure_kind::invalid_request, "the startup timeout must be positive");
  exec_request r;
  r.language = "argv";
  r.argv = request.argv.empty() ? std::vector<std::string>{"/bin/sh"} : request.argv;
  r.env = request.env;
  if (!r.env.count("TERM")) r.env["TERM"] = "xterm-256color";
  r.tier = request.tier;
  r.memory_limit_bytes = request.memory_limit_bytes;
  r.pids_limit = request.pids_limit;
  r.cpu_cores = request.cpu_cores;
  r.network_allow = request.network_allow;
  auto exec = plan_execution(r, id, ctx);
  if (!exec) return exec.error();
  return terminal_session_plan{std::move(*exec), request, number};
}

caf::actor spawn_terminal_session(caf::actor_system& system, terminal_session_plan plan, session_env env) {
  return system.spawn(terminal_session, std::move(plan), std::move(env));
}

} // namespace corral
