#include "actors/leases/cgroup_lease.hpp"

#include <csignal>
#include <optional>
#include <thread>

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/io/io_events.hpp"
#include "actors/leases/lease_messages.hpp"
#include "tiers/cgroups/cgroup_set.hpp"
#include "tiers/state_dir/lease_record.hpp"

namespace corral {

namespace {

using std::chrono::milliseconds;
using clock_type = std::chrono::steady_clock;

constexpr milliseconds kKillTick{5};      // between SIGKILL rounds after the grace
constexpr milliseconds kWatchTick{50};    // terminated and empty: catch a member joining late
constexpr milliseconds kFinishTick{2};    // finish polls for the cgroups to empty
constexpr milliseconds kSampleTick{50};   // v2 without memory.peak samples memory.current
constexpr milliseconds kFinishBound{5000};
constexpr milliseconds kExitBound{2000};  // the exit path blocks its thread; keep it short
constexpr milliseconds kFreezeTick{5};
constexpr milliseconds kFreezeBound{5000};  // a member in uninterruptible sleep never freezes

enum class lease_phase {
  idle,         // nothing created yet
  held,         // cgroups and record exist; the child may be running
  terminating,  // SIGTERM sent; SIGKILL rounds after the grace
  finishing,    // SIGKILL rounds until empty, then report and remove
  done,         // removed (or never created): nothing of ours is left
};

struct cgroup_lease_state {
  cgroup_lease_config config;
  lease_phase phase = lease_phase::idle;
  std::optional<cgroup_set> set;
  lease_acquired acquired;  // replayed if acquire comes twice
  // An execution's counters, as reported once its program's tree was gone: finish answers
  // with them instead of reading them again (the helper's own exit is not the program's).
  std::optional<lease_report> reported;
  bool attached = false;
  process_id process = 0;
  long pid = 0;
  bool escalated = false;
  // Each (re)schedule bumps the generation, so a tick of an abandoned schedule is dropped.
  std::uint64_t kill_gen = 0;
  std::uint64_t sample_gen = 0;
  caf::typed_response_promise<lease_report> finish_reply;
  clock_type::time_point finish_deadline;
  // A freeze waiting for the kernel (one at a time: the holder asks one at a time).
  std::optional<caf::typed_response_promise<lease_done>> freeze_reply;
  clock_type::time_point freeze_deadline;

  static inline const char* name = "cgroup_lease";

  // Counters first (they vanish with the cgroups), then the cgroups, then the record. A
  // cgroup that will not empty keeps its record, so the next start-up sweep retries.
  lease_report counters_now() {
    lease_report report;
    if (!set) return report;
    if (set->needs_peak_sampling()) set->sample_peak();
    auto counters = set->read_counters();
    report.usage = counters.usage;
    report.out_of_memory = counters.out_of_memory;
    report.pids_limit_hit = counters.pids_limit_hit;
    report.oom_kills = counters.oom_kills;
    report.pids_refusals = counters.pids_refusals;
    report.enforced_memory = set->enforced().memory;
    report.enforced_pids = set->enforced().pids;
    report.enforced_cpu = set->enforced().cpu;
    return report;
  }

  lease_report release(bool emptied) {
    if (!set) return lease_report{};
    auto report = reported ? *reported : counters_now();
    phase = lease_phase::done;
    if (!emptied) {
      spdlog::warn("cgroup lease {}: processes survived SIGKILL; cgroups and record kept for the next sweep",
                   config.exec_id);
      return report;
    }
    if (auto s = set->remove(); !s) {
      spdlog::warn("cgroup lease {}: {}; record kept for the next sweep", config.exec_id, s.error().message);
      return report;
    }
    if (auto s = remove_lease_record(config.leases_dir, config.exec_id); !s)
      spdlog::warn("cgroup lease {}: {}", config.exec_id, s.error().message);
    return report;
  }

  // The actor ends without finish (runtime shutdown, a killed execution): nothing may
  // outlive it, so kill and remove here, synchronously and bounded.
  ~cgroup_lease_state() {
    if (phase == lease_phase::idle || phase == lease_phase::done || !set) return;
    auto until = clock_type::now() + kExitBound;
    bool emptied;
    while (!(emptied = set->empty()) && clock_type::now() < until) {
      set->kill_all();
      std::this_thread::sleep_for(milliseconds(1));
    }
    release(emptied);
  }
};

using self_ptr = caf::stateful_actor<cgroup_lease_state>*;

void schedule_kill(self_ptr self, milliseconds after) {
  self->delayed_send(self, after, escalate_atom::value, ++self->state.kill_gen);
}

lease_acquired acquire(cgroup_lease_state& st) {
  auto refuse = [&](failure f) {
    st.phase = lease_phase::done;
    f.message = "cgroup lease: " + f.message;
    return lease_acquired{false, std::move(f), {}};
  };
  if (!valid_exec_id(st.config.exec_id))
    return refuse(make_failure(failure_kind::internal, "exec id \"" + st.config.exec_id + "\" cannot name a cgroup"));
  auto layout = st.config.layout ? expected<cgroup_layout>(*st.config.layout) : find_cgroup_layout(st.config.features);
  if (!layout) return refuse(layout.error());
  auto set = cgroup_set::plan(*layout, st.config.exec_id, st.config.nested);
  if (!set) return refuse(set.error());
  // The record comes first: a crash between the two leaves a record naming dirs that may
  // not exist (harmless to sweep), never a cgroup nobody knows about.
  if (auto s = write_lease_record(st.config.leases_dir, st.config.exec_id, set->recorded_dirs()); !s)
    return refuse(s.error());
  if (auto s = set->create(st.config.lim, !st.config.workspace); !s) {
    remove_lease_record(st.config.leases_dir, st.config.exec_id);
    return refuse(s.error());
  }
  st.set = std::move(*set);
  st.phase = lease_phase::held;
  lease_acquired a;
  a.ok = true;
  a.grant.cgroup_procs = st.set->join_files();
  a.grant.cgroup_path = st.set->path_below_mounts();
  return a;
}

void finish_step(self_ptr self) {
  auto& st = self->state;
  bool emptied = st.set->empty();
  if (!emptied && clock_type::now() < st.finish_deadline) {
    st.set->kill_all();
    schedule_kill(self, kFinishTick);
    return;
  }
  st.finish_reply.deliver(st.release(emptied));
  self->quit();
}

caf::behavior cgroup_lease(self_ptr self, cgroup_lease_config config) {
  self->state.config = std::move(config);
  return {
      [=](acquire_atom) {
        auto& st = self->state;
        if (st.phase != lease_phase::idle) return st.acquired;
        st.acquired = acquire(st);
        if (st.acquired.ok && st.set->needs_peak_sampling())
          self->delayed_send(self, kSampleTick, stats_atom::value, st.sample_gen);
        return st.acquired;
      },
      [=](tighten_atom, const limits& lim) {
        auto& st = self->state;
        if (st.phase != lease_phase::held || !st.set)
          return lease_acquired{false, make_failure(failure_kind::internal, "cgroup lease: not held"), {}};
        if (auto s = st.set->tighten(lim); !s) {
          auto f = s.error();
          f.message = "cgroup lease: " + f.message;
          return lease_acquired{false, std::move(f), {}};
        }
        return st.acquired;
      },
      [=](report_atom) {
        auto& st = self->state;
        auto report = st.counters_now();
        // An execution's lease is reported once, after its program (a workspace's budget is
        // reported around each of its executions: its finish reads its own).
        if (!st.config.workspace) st.reported = report;
        return report;
      },
      [=](attach_atom, process_id id, long pid) {
        auto& st = self->state;
        st.attached = true;
        st.process = id;
        st.pid = pid;
        // Terminated before the child joined: the running SIGKILL rounds catch it, but
        // a late member still gets its SIGTERM first.
        if (st.phase == lease_phase::terminating && !st.escalated) st.set->signal_all(SIGTERM);
      },
      [=](terminate_atom) {
        auto& st = self->state;
        if (st.phase != lease_phase::held) return;
        st.phase = lease_phase::terminating;
        st.set->signal_all(SIGTERM);
        schedule_kill(self, st.config.kill_grace);
      },
      [=](escalate_atom, std::uint64_t gen) {
        auto& st = self->state;
        if (gen != st.kill_gen) return;
        if (st.phase == lease_phase::finishing) return finish_step(self);
        if (st.phase != lease_phase::terminating) return;
        st.escalated = true;
        st.set->kill_all();
        // Keep watching until finish: a member may still join (the helper writes
        // cgroup.procs before exec, which can come after terminate).
        schedule_kill(self, st.set->empty() ? kWatchTick : kKillTick);
      },
      [=](escalate_atom) {
        // No grace (a second cancel): SIGKILL now, then the same rounds as after a grace.
        auto& st = self->state;
        if (st.phase != lease_phase::held && st.phase != lease_phase::terminating) return;
        st.phase = lease_phase::terminating;
        st.escalated = true;
        st.set->kill_all();
        schedule_kill(self, kKillTick);
      },
      [=](stats_atom, std::uint64_t gen) {
        auto& st = self->state;
        if (gen != st.sample_gen || (st.phase != lease_phase::held && st.phase != lease_phase::terminating)) return;
        st.set->sample_peak();
        self->delayed_send(self, kSampleTick, stats_atom::value, st.sample_gen);
      },
      [=](freeze_atom, bool frozen) -> caf::result<lease_done> {
        auto& st = self->state;
        if (!st.set || (st.phase != lease_phase::held && st.phase != lease_phase::terminating))
          return lease_done{false, make_failure(failure_kind::internal, "cgroup lease: not held")};
        if (st.freeze_reply) return lease_done{false, make_failure(failure_kind::conflict, "a freeze is under way")};
        if (auto s = st.set->set_frozen(frozen); !s) return lease_done{false, s.error()};
        if (!frozen) return lease_done{true, {}};
        auto reply = self->make_response_promise<lease_done>();
        st.freeze_reply = reply;
        st.freeze_deadline = clock_type::now() + kFreezeBound;
        self->send(self, frozen_atom::value);
        return reply;
      },
      [=](frozen_atom) {
        auto& st = self->state;
        if (!st.freeze_reply) return;
        if (st.set && st.set->frozen()) {
          st.freeze_reply->deliver(lease_done{true, {}});
          st.freeze_reply.reset();
          return;
        }
        if (clock_type::now() >= st.freeze_deadline) {
          if (st.set) (void)st.set->set_frozen(false);
          st.freeze_reply->deliver(lease_done{false, make_failure(failure_kind::conflict,
              "the workspace did not freeze within 5 s (a process in uninterruptible sleep); it was thawed")});
          st.freeze_reply.reset();
          return;
        }
        self->delayed_send(self, kFreezeTick, frozen_atom::value);
      },
      [=](pids_atom) {
        std::vector<int> out;
        if (auto& st = self->state; st.set)
          for (auto pid : st.set->pids()) out.push_back(static_cast<int>(pid));
        return out;
      },
      [=](finish_atom) {
        auto& st = self->state;
        auto reply = self->make_response_promise<lease_report>();
        if (st.phase == lease_phase::finishing) {
          return reply;  // the first finish answers; a second one is left unanswered
        }
        if (st.phase == lease_phase::idle || st.phase == lease_phase::done || !st.set) {
          st.phase = lease_phase::done;
          reply.deliver(lease_report{});
          self->quit();
          return reply;
        }
        st.phase = lease_phase::finishing;
        st.finish_reply = reply;
        st.finish_deadline = clock_type::now() + kFinishBound;
        ++st.kill_gen;  // the terminate rounds stop; finish runs its own
        finish_step(self);
        return reply;
      },
  };
}

} // namespace

caf::actor spawn_cgroup_lease(caf::actor_system& sys, cgroup_lease_config config) {
  return sys.spawn(cgroup_lease, std::move(config));
}

} // namespace corral
