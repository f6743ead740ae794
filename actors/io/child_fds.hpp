// The descriptors a child is spawned with: pipes, the status channel (a socket pair, so the
// jail can hand descriptors back over it) and a pty. Each is a pair: the runtime's end, and
// the child's end moved above kHighFd until posix_spawn dup2s it into place.
#pragma once

#include <cstdint>
#include <string>
#include <sys/types.h>

#include "actors/io/io_loop.hpp"

namespace corral {

// Child ends are moved above this before posix_spawn dup2s them onto 0-4, so no dup2 can
// overwrite another child end that happened to get a low number.
constexpr int kHighFd = 100;

struct fd_pair {
  int parent = -1;
  int child = -1;
};

int pidfd_open(pid_t pid);
void close_fd(int& fd);  // closes a valid fd and marks it closed

// `child_reads`: the child's end is the read end (stdin, the spec), else the write end.
bool make_pipe(fd_pair& p, bool child_reads);
// The runtime's end only reads.
bool make_status_channel(fd_pair& p);
// A pty pair with the slave set up before the spawn: `master_out` reads the terminal,
// `slave_in` writes it; `what` says which call failed.
bool make_pty(fd_pair& master_out, fd_pair& slave_in, const pty_options& o, std::string& what);

} // namespace corral
