// SIGTERM or SIGINT that arrives while the daemon starts (the runtime arming its warm
// jails, the listeners binding) or while it stops (leases finishing) is held: the socket
// loop, once it runs, stops for a held one as for one that comes later. Without this the
// default action killed the daemon mid-start, before any lease finished, and left its
// cgroups and scratch mounts to the next start in the same state dir.
#pragma once

namespace corral {

// Catches SIGTERM and SIGINT and drops SIGHUP from now on, until the socket loop installs
// its own watchers. Call before anything starts, and again once the loop has returned.
void hold_stop_signals();
// The first stop signal held since the process started, or 0.
int held_stop_signal();

} // namespace corral
