#include "proto/daemon/early_signals.hpp"

#include <csignal>

namespace corral {

namespace {

volatile std::sig_atomic_t held = 0;

void hold(int sig) {
  if (held == 0) held = sig;
}

} // namespace

void hold_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = hold;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGHUP, &ignore, nullptr);
}

int held_stop_signal() { return held; }

} // namespace corral
