#include "actors/workspaces/workspace_holder.hpp"

#include <csignal>
#include <optional>
#include <sys/syscall.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/io/io_events.hpp"
#include "actors/launch/child_launcher.hpp"
#include "actors/leases/lease_messages.hpp"

namespace corral {

namespace {

// Building the jail takes tens of milliseconds; past this something is wrong.
constexpr std::chrono::seconds kArmBound{30};

using arm_timeout_atom = caf::atom_constant<caf::atom("armtimeout")>;

enum class holder_phase { idle, arming, held, ending };

struct holder_state {
  holder_config config;
  holder_phase phase = holder_phase::idle;
  caf::actor budget;  // the workspace's cgroup lease
  lease_grant grant;  // its join files, and (once held) the holder to enter
  process_id process = 0;
  bool armed = false;  // the init's `armed` step came (it may precede `holding`)
  std::uint64_t generation = 0;  // each arming; a late timeout of an earlier one is dropped
  std::vector<caf::typed_response_promise<holder_ready>> waiters;
  bool frozen = false;
  static inline const char* name = "workspace_holder";
};

using self_ptr = caf::stateful_actor<holder_state>*;

std::string lease_id(const holder_state& st) { return st.config.env.instance + "-" + st.config.workspace; }

void answer_waiters(holder_state& st, const holder_ready& answer) {
  for (auto& w : st.waiters) w.deliver(answer);
  st.waiters.clear();
}

// The lease kills what is left (the holder's jail among it) and removes the cgroup.
void drop_budget(self_ptr self) {
  auto& st = self->state;
  if (st.process) st.config.env.launcher->io().release(st.process);
  st.process = 0;
  st.armed = false;
  st.grant = {};
  st.frozen = false;
  if (!st.budget) return;
  auto budget = st.budget;
  st.budget = caf::actor{};
  self->unlink_from(budget);
  self->request(budget, kLeaseBound, finish_atom::value).then([](lease_report&) {}, [](caf::error&) {});
}

void arming_failed(self_ptr self, failure f) {
  auto& st = self->state;
  spdlog::warn("workspace {}: its holder could not be armed: {}", st.config.workspace, f.message);
  f.message = "arming the workspace's holder: " + f.message;
  answer_waiters(st, holder_ready{false, std::move(f), {}, {}});
  drop_budget(self);
  st.phase = holder_phase::idle;
}

void maybe_held(self_ptr self) {
  auto& st = self->state;
  if (st.phase != holder_phase::arming || !st.armed || !st.grant.enter.held()) return;
  st.phase = holder_phase::held;
  spdlog::debug("workspace {}: holder armed (init pid {})", st.config.workspace, st.grant.enter.pid);
  answer_waiters(st, holder_ready{true, {}, st.grant, st.budget});
}

void launch_holder(self_ptr self, const lease_acquired& acquired) {
  auto& st = self->state;
  if (st.phase != holder_phase::arming) return;
  if (!acquired.ok) return arming_failed(self, acquired.error);
  st.grant = acquired.grant;
  arming what;
  what.work_dir = st.config.root;
  what.home = st.config.home;
  what.effective = st.config.budget;
  what.caller_path = st.config.env.caller_path;
  auto launched = st.config.env.launcher->hold(*st.config.env.boundary, what, st.grant, self);
  if (!launched) return arming_failed(self, launched.error());
  st.process = launched->id;
}

void arm(self_ptr self) {
  auto& st = self->state;
  st.phase = holder_phase::arming;
  ++st.generation;
  st.budget = st.config.env.make_budget(lease_id(st), st.config.budget);
  self->link_to(st.budget);  // the budget goes with this actor, whatever ends it
  self->request(st.budget, kLeaseBound, acquire_atom::value)
      .then([=](lease_acquired& acquired) { launch_holder(self, acquired); },
            [=](caf::error& e) { arming_failed(self, make_failure(failure_kind::internal, self->system().render(e))); });
  self->delayed_send(self, kArmBound, arm_timeout_atom::value, st.generation);
}

lease_done refused(failure_kind kind, std::string why) { return lease_done{false, make_failure(kind, std::move(why))}; }

// A signal to the workspace's process `pid` (its pid inside): found among the cgroup's
// members, pinned by a pidfd, checked again, then signalled through the pidfd.
lease_done send_signal(const std::vector<int>& members, pid_t init, int pid, int sig) {
  auto host = host_pid_of(members, init, pid);
  if (!host) return refused(failure_kind::not_found, "no process " + std::to_string(pid) + " in the workspace");
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, *host, 0));
  if (fd < 0) return refused(failure_kind::not_found, "process " + std::to_string(pid) + " has ended");
  auto again = host_pid_of(members, init, pid);
  lease_done out{true, {}};
  if (again != host)
    out = refused(failure_kind::not_found, "process " + std::to_string(pid) + " has ended");
  else if (::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) < 0)
    out = refused(failure_kind::internal, "signalling process " + std::to_string(pid) + " failed");
  ::close(fd);
  return out;
}

caf::behavior workspace_holder(self_ptr self, holder_config config) {
  self->state.config = std::move(config);
  return {
      [=](hold_atom) -> caf::result<holder_ready> {
        auto& st = self->state;
        if (st.phase == holder_phase::held) return holder_ready{true, {}, st.grant, st.budget};
        if (st.phase == holder_phase::ending)
          return holder_ready{false, make_failure(failure_kind::refused, "the workspace is ending"), {}, {}};
        auto reply = self->make_response_promise<holder_ready>();
        st.waiters.push_back(reply);
        if (st.phase == holder_phase::idle) arm(self);
        return reply;
      },
      [=](io_status& ev) {
        auto& st = self->state;
        if (ev.id != st.process || st.phase != holder_phase::arming) return;
        if (ev.line.what == status_line::kind::holding) {
          st.grant.enter = holder_ref{ev.line.pid, ev.line.start_time};
        } else if (ev.line.what == status_line::kind::step && ev.line.name == "armed") {
          st.armed = true;
        } else if (ev.line.what == status_line::kind::failed) {
          return arming_failed(self, make_failure(failure_kind::spawn_failed, ev.line.name + ": " + ev.line.message));
        }
        maybe_held(self);
      },
      [=](io_spawned&) {},
      [=](io_chunk&) {},
      [=](io_eof&) {},
      [=](io_spawn_failed& ev) {
        if (ev.id == self->state.process)
          arming_failed(self, make_failure(failure_kind::spawn_failed, "starting the exec helper: " + ev.what));
      },
      [=](io_exited& ev) {
        auto& st = self->state;
        if (ev.id != st.process) return;
        if (st.phase == holder_phase::arming)
          return arming_failed(self, make_failure(failure_kind::spawn_failed, "the holder exited while arming"));
        if (st.phase != holder_phase::held) return;
        // Everything in the workspace went with its init: said, never restarted.
        spdlog::warn("workspace {}: its holder exited (wait status {}); every process in it ended; the next "
                     "execution arms a new one", st.config.workspace, ev.wait_status);
        drop_budget(self);
        st.phase = holder_phase::idle;
      },
      [=](arm_timeout_atom, std::uint64_t generation) {
        auto& st = self->state;
        if (generation != st.generation || st.phase != holder_phase::arming) return;
        arming_failed(self, make_failure(failure_kind::internal, "it took longer than 30 s"));
      },
      [=](freeze_atom, bool frozen) -> caf::result<lease_done> {
        auto& st = self->state;
        // Nothing armed: nothing runs that could be frozen, and the next step cannot start
        // while the registry says paused.
        if (st.phase != holder_phase::held) return lease_done{true, {}};
        auto reply = self->make_response_promise<lease_done>();
        self->request(st.budget, kLeaseBound, freeze_atom::value, frozen)
            .then([=](lease_done& done) mutable {
                    if (done.ok) self->state.frozen = frozen;
                    reply.deliver(std::move(done));
                  },
                  [=](caf::error& e) mutable {
                    reply.deliver(refused(failure_kind::internal, "the workspace's lease: " + self->system().render(e)));
                  });
        return reply;
      },
      [=](pids_atom) -> caf::result<process_list> {
        auto& st = self->state;
        if (st.phase != holder_phase::held) return process_list{true, {}, {}};
        auto reply = self->make_response_promise<process_list>();
        auto init = static_cast<pid_t>(st.grant.enter.pid);
        self->request(st.budget, kLeaseBound, pids_atom::value)
            .then([=](std::vector<int>& members) mutable {
                    reply.deliver(process_list{true, {}, list_workspace_processes(members, init)});
                  },
                  [=](caf::error& e) mutable {
                    reply.deliver(process_list{false, make_failure(failure_kind::internal, self->system().render(e)), {}});
                  });
        return reply;
      },
      [=](signal_atom, int pid, int sig) -> caf::result<lease_done> {
        auto& st = self->state;
        if (st.phase != holder_phase::held)
          return refused(failure_kind::not_found, "no process " + std::to_string(pid) + " in the workspace");
        auto reply = self->make_response_promise<lease_done>();
        auto init = static_cast<pid_t>(st.grant.enter.pid);
        self->request(st.budget, kLeaseBound, pids_atom::value)
            .then([=](std::vector<int>& members) mutable { reply.deliver(send_signal(members, init, pid, sig)); },
                  [=](caf::error& e) mutable {
                    reply.deliver(refused(failure_kind::internal, self->system().render(e)));
                  });
        return reply;
      },
      [=](stop_atom) -> caf::result<bool> {
        auto& st = self->state;
        st.phase = holder_phase::ending;
        answer_waiters(st, holder_ready{false, make_failure(failure_kind::refused, "the workspace is ending"), {}, {}});
        if (st.process) st.config.env.launcher->io().release(st.process);
        st.process = 0;
        if (!st.budget) {
          self->quit();
          return true;
        }
        auto reply = self->make_response_promise<bool>();
        auto budget = st.budget;
        st.budget = caf::actor{};
        self->unlink_from(budget);
        self->request(budget, kLeaseBound, finish_atom::value)
            .then([=](lease_report&) mutable { reply.deliver(true); self->quit(); },
                  [=](caf::error&) mutable { reply.deliver(false); self->quit(); });
        return reply;
      },
  };
}

} // namespace

caf::actor spawn_workspace_holder(caf::actor_system& sys, holder_config config) {
  return sys.spawn(workspace_holder, std::move(config));
}

} // namespace corral
