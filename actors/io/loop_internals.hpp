// Inside the I/O loop (actors/io/io_loop.hpp): the loop thread's own state, shared by
// the files of this room, each of which holds one part of what the loop does for a child:
//   io_loop.cpp         the thread, the call queue, the process table, signals, release
//   child_spawn.cpp     posix_spawn of the exec helper with its fds, and reaping it
//   output_streams.cpp  stdout/stderr reads under credit (discard or pause)
//   status_channel.cpp  the helper's status lines and the egress listeners it hands over
//   stdin_writes.cpp    stdin and spec writes, and closing stdin after them
//   warm_handoff.cpp    a warm jail's launch and its adoption by an execution
//   spare_helper.cpp    an exec helper spawned ahead, taken by the next cold spawn
//   message_relay.cpp   a session's messages copied between the child and this process's
//                       own descriptors (`corral mcp` in-process), no actor in between
// Nothing here is touched off the loop thread except through post().
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include <uv.h>

#include "actors/egress/egress_relay.hpp"
#include "actors/io/child_fds.hpp"
#include "actors/io/io_loop.hpp"
#include "actors/message_framing.hpp"

namespace corral {

constexpr std::size_t kLoopReadBuffer = 256 * 1024;

struct io_loop::impl {
  struct process;

  struct stream_state {
    process* owner = nullptr;
    stream_kind kind = stream_kind::out;
    uv_pipe_t pipe{};
    bool open = false;
    output_route route;
    std::uint64_t dropped = 0;
    bool paused = false;
  };

  // message_relay.cpp: one session's relay, owned by its process.
  struct relay_state {
    relay_ends ends;
    frame_decoder from_client;
    frame_decoder from_child;
    uv_pipe_t client_in{};
    bool client_in_open = false;
    bool client_in_paused = false;
    uv_pipe_t client_out{};
    bool client_out_open = false;
    bool client_gone = false;           // a write failed: the child's messages are dropped
    std::uint64_t toward_child = 0;     // written to the child's stdin, not yet taken
    std::uint64_t toward_client = 0;    // written to the client, not yet taken
    bool child_out_ended = false;       // io_eof waits until the client has it all
    std::uint64_t messages_in = 0;
    std::uint64_t messages_out = 0;
    std::chrono::steady_clock::time_point last_report{};
    relay_state(relay_ends e)
        : ends(std::move(e)), from_client(framing_mode::newline, ends.max_message_bytes),
          from_child(framing_mode::newline, ends.max_message_bytes) {}
  };

  struct process {
    impl* loop = nullptr;
    process_id id = 0;
    pid_t pid = -1;
    caf::actor owner;
    uv_poll_t exit_poll{};
    int pidfd = -1;
    bool exit_poll_open = false;
    bool reaped = false;
    bool released = false;
    bool detached = false;  // detach_output: streams drained into nothing until their writers go
    stream_state out, err;
    uv_pipe_t stdin_pipe{};
    bool stdin_open = false;
    bool stdin_close_requested = false;
    int stdin_pending = 0;
    uv_pipe_t status_pipe{};
    bool status_open = false;
    std::string status_buffer;
    uv_pipe_t spec_pipe{};
    bool spec_open = false;
    bool keep_spec_open = false;
    int exit_status = 0;  // valid once reaped
    int open_handles = 0;
    bool report_writes = false;
    std::size_t listeners_received = 0;  // egress listeners taken off the status channel
    int pty_master = -1;  // kept for TIOCSWINSZ; the streams read and write their own dups
    std::unique_ptr<relay_state> relay;
  };

  struct write_req {
    uv_write_t req{};
    std::string bytes;
    process* proc = nullptr;
    bool is_spec = false;
  };

  // A message to a relay's client that the pipe did not take at once.
  struct relay_write {
    uv_write_t req{};
    std::string bytes;
    impl* loop = nullptr;
    process_id id = 0;
    std::size_t queued = 0;  // bytes of it (and its newline) the pipe had not taken
  };

  uv_loop_t loop{};
  uv_async_t wake{};
  std::thread thread;
  std::mutex mutex;
  std::deque<std::function<void()>> queue;
  bool stopping = false;
  std::unordered_map<process_id, process*> processes;
  std::atomic<std::size_t> tracked_count{0};
  std::size_t armed_waiting = 0;  // warm jails and the spare, not launched yet: nobody's execution

  // spare_helper.cpp: the helper spawned ahead (counted in armed_waiting), if any.
  process* spare = nullptr;
  std::string spare_program;
  bool keep_spare = false;
  bool replace_spare = false;
  process_id next_spare_id = 0;

  void update_tracked() { tracked_count = processes.size() - armed_waiting; }
  char read_buffer[kLoopReadBuffer];

  std::unique_ptr<egress_relay> egress;
  std::atomic<std::size_t> egress_open{0};  // mirrored for tests, read off the loop thread

  impl();
  ~impl();
  void run();
  void post(std::function<void()> fn);
  void drain();
  process* find(process_id id);
  void open_pipe(process* p, uv_pipe_t& pipe, int fd, bool& open_flag, int ipc = 0);
  void close_handle(process* p, uv_handle_t* h, bool& open_flag);
  void maybe_forget(process* p);

  // child_spawn.cpp
  void do_spawn(spawn_command cmd);  // into the spare when it fits (spare_helper.cpp)
  void do_spawn_helper(spawn_command cmd);
  void on_exit(process* p);

  // output_streams.cpp
  void open_stream(process* p, stream_state& s, stream_kind kind, int fd, output_route route);
  void start_reading(stream_state& s);
  void pause_reading(stream_state& s);  // until start_reading: the child blocks on a full pipe
  void on_read(stream_state& s, ssize_t n, const uv_buf_t* buf);
  void end_stream(stream_state& s);
  void do_add_credit(process_id id, stream_kind kind, std::uint64_t bytes);
  void do_set_overflow(process_id id, stream_kind kind, overflow_policy policy);

  // status_channel.cpp
  void open_status(process* p, int fd);
  void on_status(process* p, ssize_t n, const uv_buf_t* buf);
  void read_status_now(process* p);
  void take_egress_listeners(process* p);

  // stdin_writes.cpp
  void write_to(process* p, uv_pipe_t& pipe, std::string bytes, bool is_spec);
  void on_written(write_req* req, int status);
  void finish_stdin_if_done(process* p);
  void do_write_stdin(process_id id, std::string bytes);
  void do_close_stdin(process_id id);

  // warm_handoff.cpp
  void do_launch(process_id id, std::string bytes);
  void do_adopt(process_id id, caf::actor owner, output_route out, output_route err);

  // spare_helper.cpp
  void do_keep_spare(std::string program, bool replace);
  void spawn_spare();
  bool spare_fits(const spawn_command& cmd) const;  // the spare could run it
  bool take_spare(spawn_command& cmd);  // true: cmd is running in the spare now
  void after_fitting_launch();          // the next spare (kept), or none from now (once)
  void spare_exited(process* p);

  // Reads `pipe` (whose data is its process) into the loop's buffer and hands each read to
  // `Handler`, which copies out what it keeps: the status channel, a relay's client input.
  template <void (impl::*Handler)(process*, ssize_t, const uv_buf_t*)>
  static void read_into_loop_buffer(uv_pipe_t& pipe) {
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&pipe),
        [](uv_handle_t* h, std::size_t, uv_buf_t* buf) {
          auto* proc = static_cast<process*>(h->data);
          buf->base = proc->loop->read_buffer;
          buf->len = kLoopReadBuffer;
        },
        [](uv_stream_t* h, ssize_t n, const uv_buf_t* buf) {
          auto* proc = static_cast<process*>(h->data);
          (proc->loop->*Handler)(proc, n, buf);
        });
  }

  // message_relay.cpp
  void do_relay(process_id id, relay_ends ends);
  std::vector<decoded_frame> relay_frames(process* p, frame_decoder& from, bool toward_child, ssize_t n,
                                          const uv_buf_t* buf);
  void relay_client_gone(process* p);
  void relay_end_child_output(process* p);
  void relay_child_output(process* p, ssize_t n, const uv_buf_t* buf);
  void relay_client_input(process* p, ssize_t n, const uv_buf_t* buf);
  void relay_to_client(process* p, std::string message);
  void relay_to_child(process* p, std::string message);
  void relay_gate_output(process* p, gate_output& out);
  void relay_input_taken(process* p, std::uint64_t bytes);
  void relay_resume_client(process* p);
  void relay_report(process* p, bool now);
  void close_relay(process* p);

  // io_loop.cpp
  void do_signal(process_id id, int sig, bool whole_group);
  void do_resize(process_id id, std::uint16_t rows, std::uint16_t cols);
  void do_release(process_id id);
  void do_detach_output(process_id id);
  void drain_now(stream_state& s);
};

} // namespace corral
