#include "actors/execution.hpp"

#include <csignal>
#include <filesystem>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/child_exit.hpp"
#include "actors/execution_messages.hpp"
#include "actors/execution_state.hpp"
#include "actors/io/io_loop.hpp"
#include "actors/launch/child_launcher.hpp"
#include "actors/leases/lease_messages.hpp"
#include "actors/output_collector.hpp"
#include "actors/egress/egress_proxy.hpp"
#include "actors/timeout_timer.hpp"
#include "actors/warm/warm_pool.hpp"
#include "tiers/jail/scratch_dir.hpp"

namespace corral {

namespace {

// Appends the runtime phase that began at `st.phase_began` as a timed step, and starts the next.
void close_phase(execution_state& st, const char* name) {
  auto now = std::chrono::steady_clock::now();
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now - st.phase_began).count();
  st.steps.push_back({name, static_cast<std::uint64_t>(us)});
  st.phase_began = now;
}

using self_ptr = caf::stateful_actor<execution_state>*;

// The pool answers from its own state; past this, start cold rather than wait.
constexpr std::chrono::seconds kTakeBound{5};
// After a jail's result: how long the helper and the jail's init get to exit on their own
// before the lease kills them.
constexpr std::chrono::seconds kHelperExitBound{1};

verdict judge(const execution_state& st, const lease_report& report) {
  if (timed_out(st.cause)) return verdict::timed_out;
  if (cancelled(st.cause)) return verdict::cancelled;
  if (report.out_of_memory) return verdict::out_of_memory;
  if (report.pids_limit_hit) return verdict::pids_limit;
  if (st.target_exit && decode_wait_status(st.target_exit->wait_status).term_signal) return verdict::signaled;
  bool compile_step = st.plan.steps[st.step].compile;
  if (compile_step) return verdict::compile_failed;
  if ((st.out && st.out->truncated) || (st.err && st.err->truncated)) return verdict::output_truncated;
  return verdict::exited;
}

// A warm jail taken but never launched: EOF on its fd 3 ends it (the lease, dropped with
// this actor, kills and removes whatever is left).
void retire_unlaunched_jail(execution_state& st) {
  if (st.warmth != warm_state::taken) return;
  st.warmth = warm_state::retired;
  st.env.launcher->retire_armed(st.warm->child.id);
}

void reply_failure(self_ptr self, failure f) {
  auto& st = self->state;
  if (st.phase == execution_phase::done) return;
  retire_unlaunched_jail(st);
  st.phase = execution_phase::done;
  st.reply.deliver(exec_outcome{false, std::move(f), {}});
  remove_owned_scratch(st.plan);
  self->quit(caf::exit_reason::user_shutdown);
}

// The scratch dir goes once nothing of the execution can still use it.
void end(self_ptr self) {
  remove_owned_scratch(self->state.plan);
  self->quit(caf::exit_reason::user_shutdown);
}

void deliver(self_ptr self, const lease_report& report, const char* closing_step) {
  auto& st = self->state;
  exec_result r;
  r.execution_id = st.plan.id;
  r.tier = st.plan.boundary->name();
  r.workspace = st.plan.workspace;
  r.isolation = st.isolation;
  r.not_enforced = st.not_enforced;
  r.masked = st.masked;
  close_phase(st, closing_step);
  r.steps = st.steps;
  r.duration = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - st.started);
  r.timed_out = timed_out(st.cause);
  if (st.out) r.out = std::move(*st.out);
  if (st.err) r.err = std::move(*st.err);
  auto ending = program_ending(st.target_exit, st.helper_wait_status);
  r.exit_code = ending.exit_code;
  r.term_signal = ending.term_signal;
  if (st.target_exit) {
    r.usage.peak_memory_bytes = st.target_exit->maxrss_kb * 1024;
    r.usage.cpu_user_us = st.target_exit->user_us;
    r.usage.cpu_system_us = st.target_exit->system_us;
  }
  // A cgroup's counters see every process of the execution, not only the waited-for ones.
  if (report.usage.peak_memory_bytes) r.usage.peak_memory_bytes = report.usage.peak_memory_bytes;
  if (report.usage.cpu_user_us || report.usage.cpu_system_us) {
    r.usage.cpu_user_us = report.usage.cpu_user_us;
    r.usage.cpu_system_us = report.usage.cpu_system_us;
  }
  r.network = st.network;
  r.how = judge(st, report);
  spdlog::debug("execution {} tier={} verdict={} exit={} signal={} duration_ms={:.3f}", r.execution_id,
               r.tier, to_string(r.how), r.exit_code.value_or(-1), r.term_signal.value_or(0),
               r.duration.count() / 1000.0);
  st.phase = execution_phase::done;
  st.reply.deliver(exec_outcome{true, {}, std::move(r)});
}

// True once the program's whole tree is gone and the helper has nothing left to do but
// exit: a jail's helper reports `exited` after reaping every process of its namespace.
bool program_done_before_helper(const execution_state& st) {
  return st.target_exit && st.plan.boundary->helper_exits_with_program();
}

// After the result (see finish): the lease kills what is left, removes the cgroups, and
// the execution ends.
void finish_lease(self_ptr self) {
  auto& st = self->state;
  if (st.ending == end_state::lease_finishing) return;
  st.ending = end_state::lease_finishing;
  self->request(st.lease, kLeaseBound, finish_atom::value)
      .then([=](lease_report&) { end(self); }, [=](caf::error&) { end(self); });
}

void finish(self_ptr self) {
  auto& st = self->state;
  retire_unlaunched_jail(st);  // cancelled while taking one
  if (st.cause == ending_cause::none) st.cause = ending_cause::completed;
  st.phase = execution_phase::finishing;
  st.phase_began = std::chrono::steady_clock::now();
  if (st.egress && !st.network) {
    // The audit first: the loop has closed the connections (release), their reports are
    // on their way to the egress_proxy, which answers once it has them all.
    self->request(st.egress, kLeaseBound, audit_atom::value)
        .then([=](network_audit& audit) { self->state.network = std::move(audit); finish(self); },
              [=](caf::error&) { self->state.network = network_audit{}; finish(self); });
    return;
  }
  auto lease_failed = [=](caf::error& e) {
    reply_failure(self, make_failure(failure_kind::internal, "the lease did not finish: " + self->system().render(e)));
  };
  if (st.helper == helper_state::reaped || !program_done_before_helper(st)) {
    self->request(st.lease, kLeaseBound, finish_atom::value).then([=](lease_report& report) {
      deliver(self, report, "lease_finish");
      end(self);
    }, lease_failed);
    return;
  }
  // The result does not wait for the helper's exit and the namespaces' teardown: the
  // counters are final once the program's tree is gone. The execution still counts as
  // running until the lease has removed its cgroups. The helper and the jail's init exit on
  // their own right after the program: finishing once they have finds the cgroups empty,
  // where finishing at once would freeze and kill them (milliseconds of kernel time on
  // cgroup v1, beside the reply and the next request).
  self->request(st.lease, kLeaseBound, report_atom::value).then([=](lease_report& report) {
    deliver(self, report, "lease_report");
    auto& s = self->state;
    if (s.helper == helper_state::reaped) return finish_lease(self);
    s.ending = end_state::result_out;
    self->delayed_send(self, kHelperExitBound, finish_atom::value);
  }, lease_failed);
}

void start_step(self_ptr self);

void step_complete(self_ptr self) {
  auto& st = self->state;
  bool program_gone = st.helper == helper_state::reaped || program_done_before_helper(st);
  if (!program_gone || !st.out || !st.err || st.phase != execution_phase::running) return;
  st.env.launcher->io().release(st.process);
  if (st.start_failure) {
    auto& f = *st.start_failure;
    return reply_failure(self, make_failure(failure_kind::spawn_failed,
                                            f.name + ": " + f.message + " (errno " +
                                                std::to_string(f.error_number) + ")"));
  }
  bool succeeded = st.target_exit && decode_wait_status(st.target_exit->wait_status).exit_code == 0;
  bool more = st.step + 1 < st.plan.steps.size();
  if (more && succeeded && !ended_by_corral(st.cause)) {
    ++st.step;
    return start_step(self);
  }
  finish(self);
}

// The step's launch, into the warm jail taken for it or cold. Either way the tier plans
// it from the step's own request; a warm jail's plan must ask for exactly the boundary the
// jail was armed with.
expected<launched_child> launch_step(self_ptr self, const exec_step& step, child_wiring wiring) {
  auto& st = self->state;
  auto request = launch_request_for(st.plan, step, false);
  if (st.warmth == warm_state::taken) {
    auto launched = st.env.launcher->launch_armed(st.warm->child, *st.plan.boundary, request, st.grant,
                                                  std::move(wiring));
    if (launched) st.warmth = warm_state::launched;
    return launched;
  }
  return st.env.launcher->launch(*st.plan.boundary, request, st.grant, std::move(wiring));
}

void start_step(self_ptr self) {
  auto& st = self->state;
  st.phase = execution_phase::launching;
  st.process = 0;
  st.helper = helper_state::running;
  st.out.reset();
  st.err.reset();
  st.target_exit.reset();
  st.start_failure.reset();

  const auto& step = st.plan.steps[st.step];
  bool last = st.step + 1 == st.plan.steps.size();
  auto cap = st.plan.effective.output_cap;
  auto live = st.plan.live_output;
  auto* io = &st.env.launcher->io();
  auto out = self->spawn<caf::linked>(output_collector, caf::actor{self}, stream_kind::out, cap, live, io);
  auto err = self->spawn<caf::linked>(output_collector, caf::actor{self}, stream_kind::err, cap, live, io);
  st.phase_began = std::chrono::steady_clock::now();
  if (st.warmth == warm_state::cold && st.plan.network == network_mode::allowlist && !st.egress)
    st.egress = self->spawn<caf::linked>(egress_proxy, st.plan.egress, io, st.plan.live_output);

  child_wiring wiring;
  wiring.owner = self;
  wiring.out = collector_route(out, cap, static_cast<bool>(live));
  wiring.err = collector_route(err, cap, static_cast<bool>(live));
  wiring.stdin_pipe = last && st.plan.stdin_data.has_value();
  wiring.egress = st.egress;
  auto launched = launch_step(self, step, std::move(wiring));
  if (!launched) {
    self->send_exit(out, caf::exit_reason::user_shutdown);
    self->send_exit(err, caf::exit_reason::user_shutdown);
    return reply_failure(self, launched.error());
  }
  st.process = launched->id;
  st.isolation = launched->isolation;
  st.masked = launched->masked;
  for (auto& n : launched->not_enforced) st.not_enforced.push_back(n);
}

void lease_ready(self_ptr self, const lease_acquired& acquired) {
  if (!acquired.ok) return reply_failure(self, acquired.error);
  auto& st = self->state;
  close_phase(st, "lease");
  st.grant = acquired.grant;
  if (cancelled(st.cause)) return finish(self);
  self->spawn<caf::linked>(timeout_timer, caf::actor{self}, st.plan.effective.timeout);
  start_step(self);
}

void acquire_lease(self_ptr self) {
  auto& st = self->state;
  // Cold: the execution's own scratch dir (a warm jail came with one).
  if (auto made = make_scratch_dir(st.plan); !made) return reply_failure(self, made.error());
  st.lease = st.env.make_lease(lease_request_for(st.plan));
  self->monitor(st.lease);
  self->request(st.lease, kLeaseBound, acquire_atom::value)
      .then([=](lease_acquired& acquired) { lease_ready(self, acquired); },
            [=](caf::error& e) {
              reply_failure(self, make_failure(failure_kind::internal, "acquiring the lease: " + self->system().render(e)));
            });
}

// Single-step plans on the pool's tier only: a compiled language's two steps share one
// scratch dir and run in two jails.
bool takes_warm_jail(const execution_state& st) {
  // A workspace's files are bound where the pool's jails show their own scratch dir.
  return st.env.warm_pool && st.env.warm_tier && st.plan.boundary == st.env.warm_tier && st.plan.steps.size() == 1 &&
         st.plan.workspace.empty();
}

void start_warm(self_ptr self, warm_jail jail) {
  auto& st = self->state;
  st.lease = jail.lease;
  self->monitor(st.lease);
  st.warm = std::move(jail);
  st.warmth = warm_state::taken;
  // The jail's dir (already its /work) is the execution's now, removed at its end; the
  // source file, if any, is written there.
  if (auto used = use_scratch_dir(st.plan, st.warm->scratch); !used) return reply_failure(self, used.error());
  // The jail's cgroups were made with the profile's limits: the request's may be tighter.
  const auto& armed = st.warm->armed_limits;
  const auto& asked = st.plan.effective;
  if (armed.memory_bytes == asked.memory_bytes && armed.pids == asked.pids && armed.cpu_cores == asked.cpu_cores)
    return lease_ready(self, lease_acquired{true, {}, st.warm->grant});
  self->request(st.lease, kLeaseBound, tighten_atom::value, st.plan.effective)
      .then([=](lease_acquired& acquired) { lease_ready(self, acquired); },
            [=](caf::error& e) {
              reply_failure(self, make_failure(failure_kind::internal, "tightening the warm jail's lease: " +
                                                                          self->system().render(e)));
            });
}

void terminate(self_ptr self) {
  auto& st = self->state;
  if (st.lease) self->send(st.lease, terminate_atom::value);
}

} // namespace

caf::behavior execution(self_ptr self, execution_plan plan, execution_env env) {
  self->state.plan = std::move(plan);
  self->state.env = std::move(env);
  self->state.not_enforced = self->state.plan.not_enforced;
  // The collectors and the timer are linked: when this actor quits, they go too.
  self->set_down_handler([=](caf::down_msg& down) {
    auto& st = self->state;
    if (down.source == st.lease && st.phase != execution_phase::done) {
      st.lease = caf::actor{};
      reply_failure(self, make_failure(failure_kind::internal, "the execution's lease died"));
      return;
    }
    // The caller went away: nobody will read the result, so end the execution now.
    if (st.phase != execution_phase::done && st.phase != execution_phase::finishing) {
      st.cause = with_cancel(st.cause);
      terminate(self);
    }
  });
  return {
      [=](run_atom) -> caf::result<exec_outcome> {
        auto& st = self->state;
        st.reply = self->make_response_promise<exec_outcome>();
        st.started = std::chrono::steady_clock::now();
        st.phase_began = st.started;
        if (auto caller = caf::actor_cast<caf::actor>(self->current_sender())) self->monitor(caller);
        if (st.plan.live_output) self->send(st.plan.live_output, execution_started{st.plan.id, self});
        st.phase = execution_phase::leasing;
        if (!takes_warm_jail(st)) {
          acquire_lease(self);
          return st.reply;
        }
        self->request(st.env.warm_pool, kTakeBound, take_atom::value)
            .then(
                [=](warm_jail& jail) {
                  if (!jail.ok) return acquire_lease(self);
                  start_warm(self, std::move(jail));
                },
                [=](caf::error&) { acquire_lease(self); });
        return st.reply;
      },
      [=](io_spawned& ev) {
        auto& st = self->state;
        if (ev.id != st.process) return;
        st.phase = execution_phase::running;
        close_phase(st, "spawn");
        self->send(st.lease, attach_atom::value, ev.id, ev.pid);
        if (st.step + 1 == st.plan.steps.size() && st.plan.stdin_data) {
          // Written by the loop concurrently with reading both outputs: large stdin
          // against large output cannot deadlock.
          st.env.launcher->io().write_stdin(ev.id, *st.plan.stdin_data);
          st.env.launcher->io().close_stdin(ev.id);
        } else if (st.warmth == warm_state::launched) {
          st.env.launcher->io().close_stdin(ev.id);  // a warm jail always has a stdin pipe: EOF at once
        }
        if (ended_by_corral(st.cause)) terminate(self);
      },
      [=](io_spawn_failed& ev) {
        if (ev.id != self->state.process) return;
        reply_failure(self, make_failure(failure_kind::spawn_failed,
                                         "starting the exec helper: " + ev.what));
      },
      [=](io_status& ev) {
        auto& st = self->state;
        if (ev.id != st.process) return;
        switch (ev.line.what) {
          case status_line::kind::step:
            spdlog::debug("execution {} step {} {} us", st.plan.id, ev.line.name, ev.line.micros);
            st.steps.push_back({ev.line.name, ev.line.micros});
            break;
          case status_line::kind::started: break;
          case status_line::kind::holding: break;  // a holder's line; never a step's
          case status_line::kind::failed: st.start_failure = ev.line; break;
          case status_line::kind::exited:
            st.target_exit = ev.line;
            // From the spawn to the program's end (cold: the helper's steps listed before it
            // fall inside this span too).
            close_phase(st, "run");
            step_complete(self);
            break;
        }
      },
      [=](io_exited& ev) {
        auto& st = self->state;
        if (ev.id != st.process) return;
        st.helper = helper_state::reaped;
        st.helper_wait_status = ev.wait_status;
        // The helper outlives the program by its own exit (a jail's: the namespaces' teardown).
        if (st.target_exit) close_phase(st, "teardown");
        // Left running in the workspace, the program's background processes may hold its
        // pipes for hours: its output ends here, the rest is read and dropped.
        if (st.plan.leave_running && (!st.out || !st.err)) st.env.launcher->io().detach_output(ev.id);
        else self->delayed_send(self, kEofBound, eof_wait_atom::value, ev.id);
        if (st.ending == end_state::result_out) return finish_lease(self);
        step_complete(self);
      },
      [=](finish_atom) {
        if (self->state.ending == end_state::result_out) finish_lease(self);  // the helper is late
      },
      [=](io_stdin_closed&) {
        // EPIPE here only means the program did not read all of its input.
      },
      [=](stream_done& done) {
        auto& st = self->state;
        (done.stream == stream_kind::out ? st.out : st.err) = std::move(done.captured);
        step_complete(self);
      },
      [=](eof_wait_atom, process_id id) {
        auto& st = self->state;
        if (id == st.process && (!st.out || !st.err)) st.env.launcher->io().release(id);
      },
      [=](timeout_atom) {
        auto& st = self->state;
        if (st.phase == execution_phase::finishing || st.phase == execution_phase::done) return;
        st.cause = with_timeout(st.cause);
        terminate(self);
      },
      [=](cancel_atom) {
        auto& st = self->state;
        if (st.phase == execution_phase::finishing || st.phase == execution_phase::done) return;
        // A second cancel does not wait for the grace (a second ^C).
        if (cancelled(st.cause) && st.lease) return self->send(st.lease, escalate_atom::value);
        st.cause = with_cancel(st.cause);
        terminate(self);
      },
  };
}

} // namespace corral
