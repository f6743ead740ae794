// The libuv I/O loop: one thread that owns every pipe, pty and child process of the
// runtime. Actors talk to it through these thread-safe calls (queued, then uv_async_send)
// and hear back through the messages of io_events.hpp. No handle is ever touched from
// another thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "actors/egress/egress_messages.hpp"
#include "actors/io/io_events.hpp"

namespace corral {

// What happens when a stream's credit is used up.
enum class overflow_policy : std::uint8_t {
  discard,  // keep reading and count the bytes (one-shot capture: never block the child)
  pause,    // stop reading until credit is added (sessions: the child blocks on a full pipe)
};

struct output_route {
  caf::actor sink;  // receives io_chunk and io_eof for this stream
  std::uint64_t credit = 0;
  overflow_policy when_exhausted = overflow_policy::discard;
};

// A pseudo-terminal instead of pipes: the slave is the child's stdin, stdout and stderr
// (the exec helper makes it the controlling terminal when the spec says so); the master is
// read as the `out` stream and written by write_stdin. No `err` stream is opened.
struct pty_options {
  bool enabled = false;
  std::uint16_t rows = 24;
  std::uint16_t cols = 80;
  bool echo = true;  // false: ECHO cleared on the slave before the spawn
};

// A stdio session whose client is this process's own descriptors (`corral mcp` run
// in-process): the loop copies whole messages both ways between them and the child, on
// its own thread, with no actor in between. The session still owns every decision (the
// boundary, the timers, the end); it hears io_relay_activity, io_relay_refused and
// io_relay_closed. The loop reads and writes its own duplicates of the descriptors, which
// must be pipes or sockets.
struct relay_ends {
  int from_client = -1;  // read: newline-framed messages for the child's stdin
  int to_client = -1;    // written: the child's stdout messages
  std::size_t max_message_bytes = 0;  // longer messages are dropped and reported, each way
  std::uint64_t window_bytes = 0;     // queued toward a side before the other is paused
  caf::actor notify;
  // The MCP gateway's policy stage, or none (transparent). Handed over whole: from here the
  // loop alone uses it, and reports its decisions to `notify` as io_relay_gate.
  std::shared_ptr<mcp_gate> gate;
};

struct spawn_command {
  process_id id = 0;
  std::string program;  // absolute path (the exec helper)
  std::vector<std::string> argv;
  std::vector<std::string> envp;
  bool stdin_pipe = false;  // false: /dev/null
  std::string spec_bytes;   // written to fd 3, then closed (unless keep_spec_open)
  // A warm jail: fd 3 stays open after spec_bytes for a later launch() (tiers/jail/jail_spec.hpp).
  bool keep_spec_open = false;
  caf::actor owner;         // io_spawned, io_spawn_failed, io_status, io_exited, io_stdin_closed
  output_route out;
  output_route err;
  bool report_writes = false;  // io_written to the owner after each stdin write
  pty_options pty;
  // Allowlist network mode: the execution's egress_proxy actor, which decides for every
  // connection on the listeners the jail hands over (actors/egress/egress_relay.hpp).
  caf::actor egress;
};

class io_loop {
public:
  io_loop();
  ~io_loop();
  io_loop(const io_loop&) = delete;
  io_loop& operator=(const io_loop&) = delete;

  void spawn(spawn_command cmd);
  void write_stdin(process_id id, std::string bytes);
  void close_stdin(process_id id);
  // Signals the spawned process, or with `whole_group` its process group.
  void signal(process_id id, int sig, bool whole_group);
  void add_credit(process_id id, stream_kind stream, std::uint64_t bytes);
  // Changes what the stream does once its credit is used up (a paced capture that reached
  // its cap switches to discard, so the child no longer waits for its reader).
  void set_overflow(process_id id, stream_kind stream, overflow_policy policy);
  // Sets a pty's window size (TIOCSWINSZ on the master); the kernel sends SIGWINCH to the
  // terminal's foreground process group. Ignored for processes without a pty.
  void resize(process_id id, std::uint16_t rows, std::uint16_t cols);
  // A warm jail's launch: writes the bytes to its fd 3, then closes it (EOF). Empty bytes
  // just close it, which retires the jail.
  void launch(process_id id, std::string bytes);
  // Hands a running process (a warm jail) to a new owner and new output routes. The new
  // owner then gets io_spawned as after a spawn, and io_exited and io_eof again for what
  // already happened, so it sees the same sequence either way.
  void adopt(process_id id, caf::actor owner, output_route out, output_route err);
  // Closes what is still open of the process's streams (a bound on waiting for EOF when a
  // descendant that escaped holds a pipe open) and forgets it once reaped.
  void release(process_id id);
  // Ends the streams for their readers (io_eof, after what the pipes hold now) but keeps
  // reading and discarding them until the last writer closes them, so background
  // processes a workspace step left behind never meet EPIPE; forgotten once reaped.
  void detach_output(process_id id);
  // Starts relaying between the process's stdin/stdout and the ends (relay_ends above).
  // The stdout stream must have been opened with no credit, so nothing was read before.
  void relay(process_id id, relay_ends ends);
  // The egress_proxy actor's answer to an egress_ask (actors/egress/egress_messages.hpp).
  void egress_answer(corral::egress_answer answer);
  // Proxied connections the loop holds for `id` (for tests: none may outlive it).
  std::size_t egress_connections(process_id id) const;

  // Keeps one exec helper (`program`, started as `corral-exec`) spawned ahead, idle on its
  // fd 3: the next spawn of that helper (a cold launch: no pty, no kept spec) takes it,
  // given the command's owner, routes and spec, instead of spawning one, so the helper's
  // exec is off the launch's path. `replace`: spawn the next spare after each take (a
  // one-shot runtime wants only the first). Spares are killed with the loop.
  void keep_spare_helper(std::string program, bool replace);

  // Number of processes the loop still tracks (for tests: nothing may be left behind),
  // not counting warm jails that wait armed for a launch, nor the spare helper.
  std::size_t tracked() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace corral
