#include "actors/sessions/session_lifecycle.hpp"

#include <csignal>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/child_exit.hpp"
#include "tiers/jail/scratch_dir.hpp"

namespace corral {

namespace {

const char* noun(session_type t) { return t == session_type::stdio ? "session" : "terminal"; }

end_rule rule(session_type t) {
  return t == session_type::stdio ? end_rule::failed_start_outranks : end_rule::first_wins;
}

} // namespace

session_lifecycle::session_lifecycle(caf::event_based_actor* self, session_kind& kind, session_type type)
    : self_(self), kind_(kind), type_(type), ending_(rule(type)) {}

void session_lifecycle::start(execution_plan exec, std::uint64_t number, session_env env,
                              std::chrono::milliseconds startup, std::chrono::milliseconds lifetime,
                              bool reads_stderr) {
  exec_ = std::move(exec);
  number_ = number;
  env_ = std::move(env);
  startup_ = startup;
  reads_stderr_ = reads_stderr;
  lease_ = env_.make_lease(lease_request_for(exec_));
  self_->monitor(lease_);
  self_->delayed_send(self_, startup, startup_atom::value);
  if (lifetime > kNoDeadline) self_->delayed_send(self_, lifetime, lifetime_atom::value);
  self_->request(lease_, kLeaseBound, acquire_atom::value)
      .then(
          [this](lease_acquired& acquired) {
            if (!acquired.ok) return lease_failed(acquired.error.describe());
            lease_granted(acquired.grant);
          },
          [this](caf::error& e) { lease_failed("acquiring the lease: " + self_->system().render(e)); });
}

void session_lifecycle::lease_failed(std::string why) {
  if (lease_state_ != lease_state::acquiring) return;  // the lease died meanwhile
  lease_state_ = lease_state::failed;
  offer_reason(session_end_reason::failed, std::move(why));
  maybe_finish();
}

void session_lifecycle::lease_granted(const lease_grant& grant) {
  if (lease_state_ != lease_state::acquiring) return;
  lease_state_ = lease_state::granted;
  grant_ = grant;
  // Ended while the lease was acquired (cancel, the startup deadline): nothing to launch. A
  // stdio session's graceful close keeps it starting, so what was sent still reaches the child.
  if (phase_ != session_phase::starting) return maybe_finish();
  launch();
}

void session_lifecycle::launch() {
  child_ = child_state::spawning;
  auto streams = kind_.streams();
  egress_.start(self_, exec_, &io());
  child_wiring wiring;
  wiring.owner = caf::actor_cast<caf::actor>(self_);
  wiring.out = std::move(streams.out);
  wiring.err = std::move(streams.err);
  wiring.pty = streams.pty;
  wiring.stdin_pipe = true;
  wiring.report_writes = true;
  wiring.egress = egress_.proxy();  // allowlist mode: decides for the jail's proxy listeners
  auto request = launch_request_for(exec_, exec_.steps.front(), streams.pty.enabled);
  auto launched = env_.launcher->launch(*exec_.boundary, request, grant_, std::move(wiring));
  if (!launched) {
    child_ = child_state::not_launched;
    return end_now(session_end_reason::failed, launched.error().describe());
  }
  process_ = launched->id;
  isolation_ = launched->isolation;
}

void session_lifecycle::offer_reason(session_end_reason why, std::string detail) {
  ending_.offer(why, std::move(detail), target_exit_.has_value());
}

void session_lifecycle::terminate() {
  if (lease_state_ != lease_state::granted) return;
  lease_state_ = lease_state::terminating;
  self_->send(lease_, terminate_atom::value);
}

void session_lifecycle::end_now(session_end_reason why, std::string detail) {
  if (phase_ == session_phase::closed) return;
  offer_reason(why, std::move(detail));
  phase_ = session_phase::draining;
  kind_.on_ending();
  if (launched()) return terminate();
  // Not launched: a lease still being acquired is finished when it answers.
  if (lease_state_ != lease_state::acquiring) maybe_finish();
}

void session_lifecycle::write_input(std::string bytes) {
  // Until io_spawned everything waits in one queue: a write posted between the launch and
  // the flush would overtake the ones queued before it.
  if (!spawned()) before_spawn_.push_back(std::move(bytes));
  else io().write_stdin(process_, std::move(bytes));
}

void session_lifecycle::maybe_finish() {
  if (end_ != end_step::open) return;
  if (launched() && !(child_ == child_state::reaped && streams_done())) return;
  end_ = end_step::collecting_audit;
  phase_ = session_phase::draining;
  if (launched()) io().release(process_);
  kind_.on_finishing();
  // The audit before the lease: the release closed the proxied connections, whose ends are
  // on their way to the proxy.
  egress_.collect(self_, [this] { finish_lease(); });
}

void session_lifecycle::finish_lease() {
  end_ = end_step::finishing_lease;
  if (!lease_) return report_end(lease_report{});
  self_->request(lease_, kLeaseBound, finish_atom::value)
      .then([this](lease_report& report) { report_end(report); },
            [this](caf::error& e) {
              offer_reason(session_end_reason::failed, "the lease did not finish: " + self_->system().render(e));
              report_end(lease_report{});
            });
}

void session_lifecycle::report_end(const lease_report& report) {
  session_ended end;
  end.session = number_;
  end.reason = ending_.reason();
  end.detail = ending_.detail();
  auto ending = program_ending(target_exit_, child_ == child_state::reaped ? std::optional<int>(helper_wait_status_)
                                                                          : std::nullopt);
  end.exit_code = ending.exit_code;
  end.term_signal = ending.term_signal;
  kind_.fill_end(end, report);
  end.network = egress_.take_audit();
  spdlog::info("{} {} ended reason={} exit={} signal={} out={} in={}", noun(type_), exec_.id, to_string(end.reason),
               end.exit_code.value_or(-1), end.term_signal.value_or(0), end.messages_out, end.messages_in);
  phase_ = session_phase::closed;
  for (auto& peer : kind_.peers()) self_->send(peer, end);
  remove_owned_scratch(exec_);
  self_->quit();
}

bool session_lifecycle::handle_down(const caf::down_msg& down) {
  if (!lease_ || down.source != lease_.address()) return false;
  lease_ = caf::actor{};
  lease_state_ = lease_state::lost;
  offer_reason(session_end_reason::failed, std::string("the ") + noun(type_) + "'s lease died");
  if (launched()) io().signal(process_, SIGKILL, true);
  maybe_finish();
  return true;
}

caf::message_handler session_lifecycle::handlers() {
  return {
      [this](io_spawned& ev) {
        if (ev.id != process_) return;
        child_ = child_state::running;
        pid_ = ev.pid;
        self_->send(lease_, attach_atom::value, ev.id, ev.pid);
        for (auto& bytes : before_spawn_) io().write_stdin(process_, std::move(bytes));
        before_spawn_.clear();
        if (phase_ == session_phase::starting) phase_ = session_phase::running;
        kind_.on_spawned();
      },
      [this](io_spawn_failed& ev) {
        if (ev.id != process_) return;
        child_ = child_state::not_launched;
        process_ = 0;
        end_now(session_end_reason::failed, "starting the exec helper: " + ev.what);
      },
      [this](io_status& ev) {
        if (ev.id != process_) return;
        if (ev.line.what == status_line::kind::failed)
          offer_reason(session_end_reason::failed, ev.line.name + ": " + ev.line.message + " (errno " +
                                                       std::to_string(ev.line.error_number) + ")");
        if (ev.line.what == status_line::kind::exited) target_exit_ = ev.line;
      },
      [this](io_eof& ev) {
        if (ev.id != process_) return;
        (ev.stream == stream_kind::out ? out_eof_ : err_eof_) = true;
        maybe_finish();
      },
      [this](io_exited& ev) {
        if (ev.id != process_) return;
        child_ = child_state::reaped;
        helper_wait_status_ = ev.wait_status;
        // The child went on its own (or was terminated): whatever comes next is the end.
        offer_reason(session_end_reason::exited);
        begin_draining();
        kind_.on_child_exited();
        self_->delayed_send(self_, kEofBound, eof_wait_atom::value, ev.id);
        maybe_finish();
      },
      [this](eof_wait_atom, process_id id) {
        if (id != process_ || streams_done()) return;
        if (auto more = kind_.eof_wait_more()) return (void)self_->delayed_send(self_, *more, eof_wait_atom::value, id);
        io().release(id);  // the loop then reports EOF on what was still open
      },
      [this](network_event& event) {
        // From the egress proxy, as each connection ends; the whole audit is in session_ended.
        for (auto& peer : kind_.peers()) self_->send(peer, session_network{number_, event});
      },
      [this](cancel_atom) {
        // A second cancel (a second SIGINT to `corral mcp` or `corral shell`) skips the
        // grace, as an execution's does.
        if (lease_state_ == lease_state::terminating) return self_->send(lease_, escalate_atom::value);
        end_now(session_end_reason::cancelled, {});
      },
      [this](lifetime_atom) { end_now(session_end_reason::lifetime, {}); },
      [this](startup_atom) {
        if (phase_ != session_phase::starting) return;
        end_now(session_end_reason::failed, std::string("the ") + noun(type_) + " did not start within " +
                                                std::to_string(startup_.count()) + " ms");
      },
      [this](info_atom) {
        session_info i;
        i.session = number_;
        i.phase = phase_;
        i.tier = exec_.boundary->name();
        i.isolation = isolation_;
        i.pid = pid_;
        kind_.fill_info(i);
        return i;
      },
  };
}

} // namespace corral
