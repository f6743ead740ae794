#include "proto/cli/interrupt_watch.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <caf/send.hpp>
#include <spdlog/spdlog.h>

namespace corral::cli {

namespace {

sigset_t watched() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
  return set;
}

} // namespace

void block_interrupts() {
  auto set = watched();
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

interrupt_watch::interrupt_watch(caf::actor target)
    : interrupt_watch([target = std::move(target)](int sig) { caf::anon_send(target, interrupt_atom::value, sig); }) {}

interrupt_watch::interrupt_watch(std::function<void(int)> on_signal) {
  auto set = watched();
  signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC);
  if (signal_fd_ < 0 || ::pipe2(stop_, O_CLOEXEC) < 0) {
    // Blocked and unread, the signals would be lost: let them act as they would without us.
    spdlog::warn("signals to corral: signalfd or pipe2: {}; SIGINT, SIGTERM and SIGHUP end corral at once",
                 std::strerror(errno));
    ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    return;
  }
  reader_ = std::thread([fd = signal_fd_, stop = stop_[0], on_signal = std::move(on_signal)] {
    for (;;) {
      pollfd fds[2] = {{fd, POLLIN, 0}, {stop, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents) return;
      signalfd_siginfo info{};
      if (::read(fd, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) continue;
      on_signal(static_cast<int>(info.ssi_signo));
    }
  });
}

interrupt_watch::~interrupt_watch() {
  if (reader_.joinable()) {
    (void)!::write(stop_[1], "x", 1);
    reader_.join();
  }
  for (int fd : {signal_fd_, stop_[0], stop_[1]})
    if (fd >= 0) ::close(fd);
}

} // namespace corral::cli
