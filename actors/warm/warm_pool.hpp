// Warm jails: landlock jails armed before any request asks for one, so an execution's
// request path is the launch of its program, not the building of its boundary.
//
// How many: as many as executions wanted a jail at the same time in the last minute (hits
// and misses), at least one and at most the configured size; a burst of parallel requests
// like one before finds its jails armed in the idle time between them. Jails beyond the
// demand are retired once it ages out.
//
// Each warm jail is single-use and complete: its own cgroup lease (the profile's limits,
// recorded on disk like any lease), scratch dir, namespaces, filesystem view, Landlock
// ruleset and seccomp filter, armed by `corral-exec --warm` and waiting on its fd 3. An
// execution that takes one tightens the lease to its own limits, checks that its own plan
// asks for exactly the boundary the jail was armed with (jail_spec same_boundary), and
// hands over its program, argv and environment. Nothing is ever reused between
// executions; the pool arms a new jail for each one taken, once the program that took it
// is done (or has run 250 ms), so arming never competes with a short program for the CPU.
//
//   (take_atom) -> warm_jail   an armed jail (ok = false when none is ready: start cold)
//   (stop_atom) -> bool        retires every jail (helpers exited, leases finished, scratch removed)
//
// Failure edges: a jail that dies before it is taken is retired and replaced; arming that
// keeps failing backs off (up to 30 s) and executions start cold meanwhile, never weaker.
// A jail retired while its helper is still starting keeps its lease until the helper has
// exited (bounded), since the helper joins its cgroups itself and may do so late.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/stateful_actor.hpp>

#include "actors/io/io_events.hpp"
#include "actors/launch/child_launcher.hpp"
#include "actors/leases/lease_request.hpp"
#include "config/limits.hpp"
#include "tiers/jail/jail_spec.hpp"
#include "tiers/jail/scratch_dir.hpp"
#include "tiers/tier.hpp"

namespace corral {

struct warm_jail {
  bool ok = false;
  armed_child child;  // its exec helper's process id and the spec it was armed with
  caf::actor lease;   // held: the taker monitors it and finishes it
  lease_grant grant;
  std::shared_ptr<scratch_dir_owner> scratch;  // its /work; the taker's execution removes it at its end
  limits armed_limits;  // what its cgroups hold (the profile's)
};

struct warm_pool_config {
  child_launcher* launcher = nullptr;  // arms and retires the jails
  std::shared_ptr<const tier> boundary;  // a tier whose supports_warm_jails() is true
  limits defaults;                       // the profile's limits, before any request tightens them
  std::string scratch_parent;
  std::string caller_path;
  std::string instance;  // names the jails' leases: <instance>-w<n>
  // The most jails kept armed. The pool keeps as many as executions wanted one at the same
  // time within the last demand_window (at least one), and retires the rest as demand ages.
  std::size_t size = 1;
  std::chrono::milliseconds demand_window{60'000};
  lease_factory make_lease;
  caf::actor owner;  // the supervisor: the pool ends with it
};

struct warm_pool_state;

caf::behavior warm_pool(caf::stateful_actor<warm_pool_state>* self, warm_pool_config config);

caf::actor spawn_warm_pool(caf::actor_system& sys, warm_pool_config config);

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::warm_jail)
