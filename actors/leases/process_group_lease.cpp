#include "actors/leases/process_group_lease.hpp"

#include <csignal>
#include <memory>

#include "actors/atoms.hpp"
#include "actors/io/io_loop.hpp"
#include "actors/leases/lease_messages.hpp"

namespace corral {

namespace {

// Time the helper gets beyond the grace to kill descendants and report before the lease
// stops trusting it.
constexpr std::chrono::milliseconds kHelperMargin{2000};

} // namespace

caf::behavior process_group_lease(caf::event_based_actor* self, io_loop* io,
                                  std::chrono::milliseconds grace) {
  struct state {
    process_id id = 0;
    bool attached = false;
    bool terminating = false;
  };
  auto st = std::make_shared<state>();
  return {
      [=](acquire_atom) { return lease_acquired{true, {}, {}}; },
      [=](attach_atom, process_id id, long) {
        st->id = id;
        st->attached = true;
        if (st->terminating) io->signal(id, SIGTERM, false);
      },
      [=](terminate_atom) {
        if (st->terminating) return;
        st->terminating = true;
        if (!st->attached) return;  // attach will deliver it
        io->signal(st->id, SIGTERM, false);
        self->delayed_send(self, grace + kHelperMargin, escalate_atom::value);
      },
      [=](escalate_atom) {
        // The loop ignores the signal if the helper was already reaped.
        io->signal(st->id, SIGKILL, true);
      },
      // A tier whose helper is done with its program (tier::helper_exits_with_program)
      // asks for the counters before the helper's exit: there are none to read here.
      [=](report_atom) { return lease_report{}; },
      [=](finish_atom) {
        lease_report report;  // usage comes from the helper's own report
        self->quit();
        return report;
      },
  };
}

} // namespace corral
