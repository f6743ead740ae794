#include "actors/warm/warm_pool.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <stdlib.h>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/leases/lease_messages.hpp"
#include "tiers/jail/scratch_dir.hpp"

namespace corral {

namespace {

using std::chrono::milliseconds;

constexpr milliseconds kFirstBackoff{100};
constexpr milliseconds kMaxBackoff{30'000};
// Arming a jail (namespaces, mounts, rulesets) costs the machine more than a short program
// does: a jail's replacement waits until the program that took it is done, so the two do
// not compete for the CPU, but no longer than this, so a long execution does not leave
// the pool empty for the requests that come meanwhile.
constexpr milliseconds kRearmDelay{250};
// A retired helper exits on the EOF of its fd 3; one that does not within this bound is
// killed by its lease's finish (SIGKILL rounds) like any member.
constexpr milliseconds kRetireBound{5000};

struct warm_entry {
  std::string id;
  caf::actor lease;
  lease_grant grant;
  std::shared_ptr<scratch_dir_owner> scratch;
  armed_child child;
  bool ready = false;  // the helper reported `armed`
};

// A jail retired while its helper still runs. The helper joins its cgroups itself, so one
// still starting could join between the lease's check that they are empty and its rmdirs,
// which would then fail and keep them: the lease finishes once the helper has exited.
struct retiring_jail {
  caf::actor lease;
  std::shared_ptr<scratch_dir_owner> scratch;
};

} // namespace

using clock_type = std::chrono::steady_clock;

// How many executions wanted a jail at the same time, over the last demand window: the
// pool keeps that many armed (at least one, at most config.size), so a burst of parallel
// requests that came before finds its jails, armed meanwhile in the idle time between.
struct demand {
  std::set<caf::actor_addr> wanting;  // asked for a jail (taken or not), still running
  // (when, how many at once), each later sighting smaller: the window's largest is in front.
  std::deque<std::pair<clock_type::time_point, std::size_t>> seen;
  bool check_pending = false;  // a (idle_atom) is on its way to shrink the pool when demand ages
  std::size_t level = 1;        // the size in force while executions run (set when none does)

  void saw(clock_type::time_point now, std::size_t at_once) {
    while (!seen.empty() && seen.back().second <= at_once) seen.pop_back();  // outlived and outdone
    seen.emplace_back(now, at_once);
  }
  std::size_t peak(clock_type::time_point now, milliseconds window) {
    while (!seen.empty() && now - seen.front().first > window) seen.pop_front();
    return seen.empty() ? 0 : seen.front().second;
  }
};

struct warm_pool_state {
  warm_pool_config config;
  std::map<process_id, warm_entry> entries;  // spawned, armed or arming
  std::size_t leasing = 0;                   // jails whose lease is being acquired
  std::set<caf::actor_addr> takers;  // took a jail, still running: its replacement waits
  struct demand demand;
  std::uint64_t next = 1;
  unsigned failures = 0;  // in a row: sets the backoff
  bool backing_off = false;
  bool stopping = false;
  std::size_t retiring = 0;                        // leases being finished or waiting below
  std::map<process_id, retiring_jail> exiting;     // retired; their lease finishes once they exit
  std::vector<caf::typed_response_promise<bool>> stop_replies;

  static inline const char* name = "warm_pool";
  // Ended without stop (its supervisor went away): the leases and scratch dirs' owners,
  // dropped with this state, kill, unmount and remove what is left themselves.
};

namespace {

using self_ptr = caf::stateful_actor<warm_pool_state>*;

void answer_stop_if_done(self_ptr self) {
  auto& st = self->state;
  if (!st.stopping || st.leasing > 0 || st.retiring > 0 || !st.entries.empty()) return;
  for (auto& rp : st.stop_replies) rp.deliver(true);
  st.stop_replies.clear();
}

void finish_lease(self_ptr self, caf::actor lease, std::shared_ptr<scratch_dir_owner> scratch) {
  auto done = [=] {
    scratch->remove();
    --self->state.retiring;
    answer_stop_if_done(self);
  };
  self->request(lease, kLeaseBound, finish_atom::value).then([=](lease_report&) { done(); }, [=](caf::error&) { done(); });
}

enum class helper_state { gone, running };

// Ends a jail nobody took: EOF on its fd 3 lets its helper exit, the lease kills whatever
// is left and removes its cgroups (after the helper has exited, if it was running), then
// the scratch dir goes.
void retire(self_ptr self, process_id process, caf::actor lease, std::shared_ptr<scratch_dir_owner> scratch,
            helper_state helper = helper_state::gone) {
  auto& st = self->state;
  if (process) st.config.launcher->retire_armed(process);
  if (!lease) {
    scratch->remove();
    return;
  }
  self->demonitor(lease);
  ++st.retiring;
  if (process && helper == helper_state::running) {
    st.exiting[process] = retiring_jail{std::move(lease), std::move(scratch)};
    self->delayed_send(self, kRetireBound, finish_atom::value, process);
    return;
  }
  finish_lease(self, std::move(lease), std::move(scratch));
}

// The retired helper exited (or the bound passed): its lease can finish now.
bool helper_exited(self_ptr self, process_id process) {
  auto& st = self->state;
  auto it = st.exiting.find(process);
  if (it == st.exiting.end()) return false;
  auto jail = std::move(it->second);
  st.exiting.erase(it);
  finish_lease(self, std::move(jail.lease), std::move(jail.scratch));
  return true;
}

void fill(self_ptr self);

// Tells the supervisor how many jails are ready (its stats show it).
void report_ready(self_ptr self) {
  auto& st = self->state;
  auto ready = static_cast<std::size_t>(
      std::count_if(st.entries.begin(), st.entries.end(), [](auto& kv) { return kv.second.ready; }));
  self->send(st.config.owner, warm_atom::value, ready);
}

void arming_failed(self_ptr self, const std::string& why) {
  auto& st = self->state;
  ++st.failures;
  // One line when it starts failing, not one per attempt.
  if (st.failures == 1) spdlog::warn("warm jails: arming failed ({}); executions start cold meanwhile", why);
  else spdlog::debug("warm jails: arming failed again ({})", why);
  if (st.backing_off || st.stopping) return;
  st.backing_off = true;
  auto wait = std::min(kMaxBackoff, kFirstBackoff * (1u << std::min(st.failures, 9u)));
  self->delayed_send(self, wait, rearm_atom::value);
}

// Lease acquired: plan the jail's boundary and start its helper armed.
void spawn_jail(self_ptr self, std::string id, caf::actor lease, std::shared_ptr<scratch_dir_owner> scratch,
                lease_grant grant) {
  auto& st = self->state;
  arming what{.work_dir = scratch->path(), .home = {}, .effective = st.config.defaults, .caller_path = st.config.caller_path};
  auto armed = st.config.launcher->arm(*st.config.boundary, what, grant, self);
  if (!armed) {
    retire(self, 0, lease, scratch);
    return arming_failed(self, armed.error().message);
  }
  auto process = armed->id;
  st.entries[process] = warm_entry{std::move(id), std::move(lease), std::move(grant), std::move(scratch),
                                   std::move(*armed), false};
}

void arm_one(self_ptr self) {
  auto& st = self->state;
  auto id = st.config.instance + "-w" + std::to_string(st.next);
  auto made = scratch_dir_owner::make(st.config.scratch_parent, id, st.config.defaults.scratch_bytes);
  if (!made) return arming_failed(self, made.error().message);
  std::shared_ptr<scratch_dir_owner> scratch = *made;

  auto lease = st.config.make_lease(lease_request{id, st.config.boundary, st.config.defaults, {}});
  self->monitor(lease);
  ++st.leasing;
  ++st.next;
  self->request(lease, kLeaseBound, acquire_atom::value)
      .then(
          [=](lease_acquired& acquired) {
            auto& s = self->state;
            --s.leasing;
            if (!acquired.ok || s.stopping) {
              retire(self, 0, lease, scratch);
              if (!acquired.ok) arming_failed(self, acquired.error.message);
              return answer_stop_if_done(self);
            }
            spawn_jail(self, id, lease, scratch, acquired.grant);
          },
          [=](caf::error& e) {
            --self->state.leasing;
            retire(self, 0, lease, scratch);
            arming_failed(self, "acquiring the lease: " + self->system().render(e));
            answer_stop_if_done(self);
          });
}

std::size_t wanted(self_ptr self) {
  auto& st = self->state;
  auto most = st.demand.peak(clock_type::now(), st.config.demand_window);
  return std::clamp<std::size_t>(most, 1, std::max<std::size_t>(st.config.size, 1));
}

// The pool grows to the demand only while no execution that asked is running: arming the
// jails for a burst beside the burst's own cold starts would slow them all. Meanwhile it
// keeps the size it had (replacing what is taken) or shrinks with the demand.
void fill(self_ptr self) {
  auto& st = self->state;
  auto target = wanted(self);
  if (st.demand.wanting.empty()) st.demand.level = target;
  else target = std::min(target, st.demand.level);
  while (!st.stopping && !st.backing_off && st.entries.size() + st.leasing + st.takers.size() < target)
    arm_one(self);
}

// Demand aged out of the window: retire the jails beyond it (those still arming first),
// and look again when the next sighting ages out.
void shrink(self_ptr self) {
  auto& st = self->state;
  st.demand.check_pending = false;
  auto target = wanted(self);
  st.demand.level = std::min(st.demand.level, target);
  bool retired_ready = false;
  while (!st.stopping && st.entries.size() + st.leasing > target && !st.entries.empty()) {
    auto it = std::find_if(st.entries.begin(), st.entries.end(), [](auto& kv) { return !kv.second.ready; });
    if (it == st.entries.end()) it = st.entries.begin();
    auto process = it->first;
    auto e = std::move(it->second);
    st.entries.erase(it);
    retired_ready = retired_ready || e.ready;
    retire(self, process, e.lease, e.scratch, helper_state::running);
  }
  if (retired_ready) report_ready(self);
  if (!st.demand.seen.empty() && !st.stopping) {
    auto next = st.demand.seen.front().first + st.config.demand_window - clock_type::now();
    st.demand.check_pending = true;
    self->delayed_send(self, std::max(std::chrono::duration_cast<milliseconds>(next), milliseconds{1}) + milliseconds{1},
                       idle_atom::value);
  }
}

// An execution asked for a jail: it counts toward the demand while it runs. (One that
// found none starts cold; arming beside it then readies a jail for the next request.)
void note_asker(self_ptr self, const caf::actor_addr& asker) {
  auto& st = self->state;
  if (!asker) return;
  if (st.demand.wanting.insert(asker).second) self->monitor(asker);
  st.demand.saw(clock_type::now(), st.demand.wanting.size());
  if (!st.demand.check_pending) {
    st.demand.check_pending = true;
    self->delayed_send(self, st.config.demand_window + milliseconds{1}, idle_atom::value);
  }
}

// A jail that ended before anyone took it (spawn failure, arming failure, killed).
void lost(self_ptr self, process_id process, const std::string& why) {
  auto& st = self->state;
  auto it = st.entries.find(process);
  if (it == st.entries.end()) return;
  auto e = std::move(it->second);
  st.entries.erase(it);
  if (e.ready) report_ready(self);
  retire(self, process, e.lease, e.scratch);
  if (!st.stopping) arming_failed(self, why);
  fill(self);
}

} // namespace

caf::behavior warm_pool(self_ptr self, warm_pool_config config) {
  self->state.config = std::move(config);
  self->monitor(self->state.config.owner);
  self->set_down_handler([=](caf::down_msg& down) {
    auto& st = self->state;
    // Without its supervisor nobody takes a jail: the leases, dropped with this actor,
    // kill and remove what is left.
    if (down.source == st.config.owner.address()) return self->quit();
    bool was_wanting = st.demand.wanting.erase(down.source) > 0;
    bool was_taker = st.takers.erase(down.source) > 0;
    if (was_taker || (was_wanting && st.demand.wanting.empty())) return fill(self);
    for (auto& [process, e] : st.entries)
      if (e.lease.address() == down.source) {
        e.lease = caf::actor{};
        return lost(self, process, "its lease died");
      }
  });
  fill(self);
  return {
      [=](take_atom) {
        auto& st = self->state;
        // A miss counts as much as a take: the next burst of this size finds its jails.
        note_asker(self, caf::actor_cast<caf::actor_addr>(self->current_sender()));
        auto it = std::find_if(st.entries.begin(), st.entries.end(), [](auto& kv) { return kv.second.ready; });
        if (it == st.entries.end()) {
          fill(self);
          return warm_jail{};
        }
        auto& e = it->second;
        self->demonitor(e.lease);
        // The replacement is armed once the taker ends (down_msg) or after kRearmDelay.
        if (auto taker = caf::actor_cast<caf::actor_addr>(self->current_sender()); taker && st.takers.insert(taker).second)
          self->delayed_send(self, kRearmDelay, rearm_atom::value, taker);
        warm_jail jail{true, std::move(e.child), std::move(e.lease), std::move(e.grant), std::move(e.scratch),
                       st.config.defaults};
        st.entries.erase(it);
        report_ready(self);
        fill(self);
        return jail;
      },
      [=](rearm_atom) {
        self->state.backing_off = false;
        fill(self);
      },
      [=](rearm_atom, const caf::actor_addr& taker) {
        if (self->state.takers.erase(taker) > 0) fill(self);
      },
      [=](idle_atom) { shrink(self); },
      [=](io_spawned& ev) {
        auto& st = self->state;
        auto it = st.entries.find(ev.id);
        if (it != st.entries.end()) self->send(it->second.lease, attach_atom::value, ev.id, ev.pid);
      },
      [=](io_spawn_failed& ev) {
        if (!helper_exited(self, ev.id)) lost(self, ev.id, "starting the exec helper: " + ev.what);
      },
      [=](io_status& ev) {
        auto& st = self->state;
        auto it = st.entries.find(ev.id);
        if (it == st.entries.end()) return;
        if (ev.line.what == status_line::kind::step && ev.line.name == "armed") {
          it->second.ready = true;
          st.failures = 0;
          report_ready(self);
        } else if (ev.line.what == status_line::kind::failed) {
          spdlog::debug("warm jail {}: {} failed: {}", it->second.id, ev.line.name, ev.line.message);
        }
      },
      [=](io_exited& ev) {
        if (!helper_exited(self, ev.id)) lost(self, ev.id, "its exec helper exited before it was used");
      },
      [=](finish_atom, process_id process) { helper_exited(self, process); },
      [=](io_chunk&) {},
      [=](io_eof&) {},
      [=](io_stdin_closed&) {},
      [=](stop_atom) -> caf::result<bool> {
        auto& st = self->state;
        st.stopping = true;
        auto entries = std::move(st.entries);
        st.entries.clear();
        for (auto& [process, e] : entries) retire(self, process, e.lease, e.scratch, helper_state::running);
        if (st.leasing == 0 && st.retiring == 0) return true;
        st.stop_replies.push_back(self->make_response_promise<bool>());
        return st.stop_replies.back();
      },
  };
}

caf::actor spawn_warm_pool(caf::actor_system& sys, warm_pool_config config) {
  return sys.spawn(warm_pool, std::move(config));
}

} // namespace corral
