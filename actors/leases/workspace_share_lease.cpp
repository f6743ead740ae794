#include "actors/leases/workspace_share_lease.hpp"

#include <algorithm>
#include <csignal>
#include <memory>
#include <type_traits>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/io/io_loop.hpp"
#include "actors/leases/lease_messages.hpp"
#include "actors/workspaces/workspace_holder.hpp"

namespace corral {

namespace {

// Time the helper gets beyond the grace to end the step's tree before the lease stops
// trusting it.
constexpr std::chrono::milliseconds kHelperMargin{2000};

struct share_state {
  // Declared so the state is no aggregate: C++20 would construct an aggregate from CAF's
  // self pointer (stateful_actor prefers State(self) when it compiles), and `budget`, an
  // actor handle, would then start as this lease itself; a finish before the acquire
  // answered sent report requests to itself forever.
  share_state() = default;
  caf::actor budget;
  lease_report baseline;
  lease_grant grant;
  process_id id = 0;
  bool attached = false;
  bool terminating = false;
  static inline const char* name = "workspace_share_lease";
};

using self_ptr = caf::stateful_actor<share_state>*;
static_assert(!std::is_constructible_v<share_state, self_ptr>, "the state must start empty, not from its actor");

// What the step's verdict takes from the shared cgroup: the counts' growth while it ran.
lease_report share_of(const lease_report& before, const lease_report& now) {
  lease_report r;
  r.oom_kills = now.oom_kills - std::min(now.oom_kills, before.oom_kills);
  r.pids_refusals = now.pids_refusals - std::min(now.pids_refusals, before.pids_refusals);
  r.out_of_memory = r.oom_kills > 0;
  r.pids_limit_hit = r.pids_refusals > 0;
  r.enforced_memory = now.enforced_memory;
  r.enforced_pids = now.enforced_pids;
  r.enforced_cpu = now.enforced_cpu;
  return r;
}

caf::result<lease_report> counted(self_ptr self, bool last) {
  auto& st = self->state;
  auto reply = self->make_response_promise<lease_report>();
  if (!st.budget) {
    reply.deliver(lease_report{});
    if (last) self->quit();
    return reply;
  }
  auto before = st.baseline;
  self->request(st.budget, kLeaseBound, report_atom::value)
      .then([=](lease_report& now) mutable {
              reply.deliver(share_of(before, now));
              if (last) self->quit();
            },
            [=](caf::error&) mutable {
              reply.deliver(lease_report{});  // the workspace ended under it: nothing to count
              if (last) self->quit();
            });
  return reply;
}

caf::behavior share_lease(self_ptr self, io_loop* io, caf::actor holder, std::chrono::milliseconds grace) {
  return {
      [=](acquire_atom) -> caf::result<lease_acquired> {
        auto reply = self->make_response_promise<lease_acquired>();
        self->request(holder, kLeaseBound, hold_atom::value)
            .then(
                [=](holder_ready& ready) mutable {
                  if (!ready.ok) {
                    reply.deliver(lease_acquired{false, ready.error, {}});
                    return;
                  }
                  auto& st = self->state;
                  st.budget = ready.budget;
                  st.grant = ready.grant;
                  self->request(st.budget, kLeaseBound, report_atom::value)
                      .then(
                          [=](lease_report& now) mutable {
                            self->state.baseline = now;
                            reply.deliver(lease_acquired{true, {}, self->state.grant});
                          },
                          [=](caf::error& e) mutable {
                            reply.deliver(lease_acquired{
                                false, make_failure(failure_kind::internal, "the workspace's lease: " + self->system().render(e)),
                                {}});
                          });
                },
                [=](caf::error& e) mutable {
                  reply.deliver(lease_acquired{
                      false, make_failure(failure_kind::internal, "the workspace's holder: " + self->system().render(e)), {}});
                });
        return reply;
      },
      [=](attach_atom, process_id id, long) {
        auto& st = self->state;
        st.id = id;
        st.attached = true;
        if (st.terminating) io->signal(id, SIGTERM, false);
      },
      [=](terminate_atom) {
        auto& st = self->state;
        if (st.terminating) return;
        st.terminating = true;
        if (!st.attached) return;  // attach will deliver it
        io->signal(st.id, SIGTERM, false);
        self->delayed_send(self, grace + kHelperMargin, escalate_atom::value);
      },
      [=](escalate_atom) {
        // The loop ignores it once the helper is reaped.
        if (self->state.attached) io->signal(self->state.id, SIGKILL, true);
      },
      [=](report_atom) { return counted(self, false); },
      [=](finish_atom) { return counted(self, true); },
  };
}

} // namespace

caf::actor spawn_workspace_share_lease(caf::actor_system& sys, io_loop* io, caf::actor holder,
                                       std::chrono::milliseconds grace) {
  return sys.spawn(share_lease, io, std::move(holder), grace);
}

} // namespace corral
