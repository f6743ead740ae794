// The person's own terminal while `corral shell` (in-process or --connect) owns it: raw
// mode restored on every exit path (normal return, error, fatal signal), and window
// changes (SIGWINCH) turned into a readable descriptor for a poll loop.
#pragma once

#include <cstdint>

namespace corral::cli {

// Raw mode on stdin for as long as it lives (nothing when stdin is not a terminal). A fatal
// signal (TERM, HUP, QUIT, INT, ABRT, SEGV, PIPE: a closed stdout) restores the mode before
// the process dies of it.
struct raw_mode {
  raw_mode();
  ~raw_mode();
  raw_mode(const raw_mode&) = delete;
  raw_mode& operator=(const raw_mode&) = delete;
};

// Restores the saved mode now (idempotent; async-signal-safe): before writing a message
// for the person while a raw_mode still lives.
void restore_tty();

// SIGWINCH becomes a byte on fd() while it lives; drain() empties it. ok() is false when
// the pipe could not be made (errno says why).
class winch_pipe {
public:
  winch_pipe();
  ~winch_pipe();
  winch_pipe(const winch_pipe&) = delete;
  winch_pipe& operator=(const winch_pipe&) = delete;
  bool ok() const;
  int fd() const;
  void drain() const;
};

// The local window size (of stdout); false when it is not a terminal.
bool local_size(std::uint16_t& rows, std::uint16_t& cols);

} // namespace corral::cli
