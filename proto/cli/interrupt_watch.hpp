// SIGINT, SIGTERM and SIGHUP to the one-shot CLI commands (run, mcp, shell) as messages.
//
// block_interrupts() blocks the three in this thread and every thread started after it:
// call it before the runtime starts, so CAF's and libuv's threads inherit the mask. An
// interrupt_watch then reads them from a signalfd on a thread of its own and sends
// (interrupt_atom, signal number) to its actor, or calls a function with the number (on its
// own thread: the function must be thread-safe, as exec_control::cancel is). No handler ever runs, so nothing touches
// shared state from signal context; a signal that comes before the watch exists waits,
// pending, and the signalfd reports it. Children do not inherit the mask (the I/O loop
// spawns with an empty one). The mask stays in place to the end: the process exits with the
// status the command chose, and a late signal must not end it first (the runtime's
// teardown, which removes the leases, is bounded).
#pragma once

#include <functional>
#include <thread>

#include <caf/actor.hpp>
#include <caf/atom.hpp>

namespace corral::cli {

using interrupt_atom = caf::atom_constant<caf::atom("interrupt")>;

void block_interrupts();

// Destroy it before the actor system that `target` lives in.
class interrupt_watch {
public:
  explicit interrupt_watch(caf::actor target);
  explicit interrupt_watch(std::function<void(int)> on_signal);
  ~interrupt_watch();
  interrupt_watch(const interrupt_watch&) = delete;
  interrupt_watch& operator=(const interrupt_watch&) = delete;

private:
  int signal_fd_ = -1;
  int stop_[2] = {-1, -1};
  std::thread reader_;
};

} // namespace corral::cli
