#include "proto/daemon/early_signals.hpp"

#include <csignal>

namespace corral {

namespace {

volatile std::sig_atomic_t held = 0;

void hold(int sig) {
  if (held == 0) held = sig;
}

void disregard(int) {}

} // namespace

void hold_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = hold;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  // Caught and dropped, not SIG_IGN: an ignored disposition would pass to every child the
  // runtime starts, where a caught one is reset by exec.
  sa.sa_handler = disregard;
  ::sigaction(SIGHUP, &sa, nullptr);
}

int held_stop_signal() { return held; }

} // namespace corral
