#include "actors/io_loop.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <future>
#include <mutex>
#include <sys/socket.h>
#include <spawn.h>
#include <termios.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

#include <caf/send.hpp>
#include <uv.h>

#include "actors/egress_relay.hpp"
#include "tiers/jail/jail_spec.hpp"

namespace corral {

namespace {

// Bigger pipes mean fewer wake-ups when a child floods its output.
constexpr int kOutputPipeBytes = 1 << 20;
constexpr std::size_t kReadBuffer = 256 * 1024;
// Child ends are moved above this before posix_spawn dup2s them onto 0-4, so no dup2 can
// overwrite another child end that happened to get a low number.
constexpr int kHighFd = 100;

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

struct fd_pair {
  int parent = -1;
  int child = -1;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

} // namespace

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
  };

  struct write_req {
    uv_write_t req{};
    std::string bytes;
    process* proc = nullptr;
    bool is_spec = false;
  };

  // A pty pair with the slave set up before the spawn. O_NOCTTY: the runtime itself must
  // never acquire the terminal, or the child's TIOCSCTTY would fail.
  static bool make_pty(fd_pair& master_out, fd_pair& slave_in, const pty_options& o, std::string& what) {
    int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0) return what = std::string("posix_openpt: ") + std::strerror(errno), false;
    if (::grantpt(master) < 0 || ::unlockpt(master) < 0) {
      what = std::string("unlockpt: ") + std::strerror(errno);
      ::close(master);
      return false;
    }
    int slave = ::ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) {
      what = std::string("TIOCGPTPEER: ") + std::strerror(errno);
      ::close(master);
      return false;
    }
    winsize ws{};
    ws.ws_row = o.rows;
    ws.ws_col = o.cols;
    ::ioctl(master, TIOCSWINSZ, &ws);
    if (!o.echo) {
      termios t{};
      if (::tcgetattr(slave, &t) == 0) {
        t.c_lflag &= ~static_cast<tcflag_t>(ECHO | ECHONL);
        ::tcsetattr(slave, TCSANOW, &t);
      }
    }
    master_out.parent = master;
    slave_in.parent = ::fcntl(master, F_DUPFD_CLOEXEC, 0);  // the write side, its own handle
    slave_in.child = ::fcntl(slave, F_DUPFD_CLOEXEC, kHighFd);
    master_out.child = ::fcntl(slave, F_DUPFD_CLOEXEC, kHighFd);
    ::close(slave);
    if (slave_in.parent < 0 || slave_in.child < 0 || master_out.child < 0)
      return what = std::string("dup of the pty: ") + std::strerror(errno), false;
    return true;
  }

  uv_loop_t loop{};
  uv_async_t wake{};
  std::thread thread;
  std::mutex mutex;
  std::deque<std::function<void()>> queue;
  bool stopping = false;
  std::unordered_map<process_id, process*> processes;
  std::atomic<std::size_t> tracked_count{0};
  std::size_t armed_waiting = 0;  // warm jails not launched yet: the pool's, not an execution's

  void update_tracked() { tracked_count = processes.size() - armed_waiting; }
  char read_buffer[kReadBuffer];

  std::unique_ptr<egress_relay> egress;
  std::atomic<std::size_t> egress_open{0};  // mirrored for tests, read off the loop thread

  impl() {
    uv_loop_init(&loop);
    egress = std::make_unique<egress_relay>(&loop);
    wake.data = this;
    uv_async_init(&loop, &wake, [](uv_async_t* h) { static_cast<impl*>(h->data)->drain(); });
    thread = std::thread([this] { run(); });
  }

  ~impl() {
    post([this] {
      stopping = true;
      for (auto& [id, p] : processes) {
        // A runtime that stops kills what it started; the helper's own cleanup handles
        // descendants, and its process group is the last resort.
        if (!p->reaped && p->pid > 0) ::kill(-p->pid, SIGKILL);
      }
      uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
      uv_stop(&loop);
    });
    thread.join();
    // Reap what the stop killed so no zombie outlives the runtime, then free the rest.
    for (auto& [id, p] : processes) {
      if (!p->reaped && p->pid > 0) ::waitpid(p->pid, nullptr, 0);
      close_fd(p->pidfd);
      close_fd(p->pty_master);
      delete p;
    }
    uv_loop_close(&loop);
  }

  void run() {
    // A write to a pipe whose reader is gone raises SIGPIPE in the writing thread; blocked
    // here, the write just fails with EPIPE. Other threads of the embedding program keep
    // their own disposition.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    uv_run(&loop, UV_RUN_DEFAULT);
    // Close what stopping left open, so uv_loop_close succeeds.
    uv_walk(&loop, [](uv_handle_t* h, void*) {
      if (!uv_is_closing(h)) uv_close(h, nullptr);
    }, nullptr);
    uv_run(&loop, UV_RUN_DEFAULT);
  }

  void post(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> guard(mutex);
      queue.push_back(std::move(fn));
    }
    uv_async_send(&wake);
  }

  void drain() {
    std::deque<std::function<void()>> batch;
    {
      std::lock_guard<std::mutex> guard(mutex);
      batch.swap(queue);
    }
    for (auto& fn : batch) fn();
  }

  process* find(process_id id) {
    auto it = processes.find(id);
    return it == processes.end() ? nullptr : it->second;
  }

  // --- spawning -------------------------------------------------------------------------

  static bool make_pipe(fd_pair& p, bool child_reads) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) < 0) return false;
    int child = child_reads ? fds[0] : fds[1];
    p.parent = child_reads ? fds[1] : fds[0];
    p.child = ::fcntl(child, F_DUPFD_CLOEXEC, kHighFd);
    ::close(child);
    return p.child >= 0;
  }

  // The status channel is a socket pair, not a pipe: the jail hands its egress listeners
  // over it (SCM_RIGHTS), which a pipe cannot carry.
  static bool make_status_channel(fd_pair& p) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) return false;
    ::shutdown(fds[0], SHUT_WR);  // the runtime only reads
    p.parent = fds[0];
    p.child = ::fcntl(fds[1], F_DUPFD_CLOEXEC, kHighFd);
    ::close(fds[1]);
    return p.child >= 0;
  }

  void do_spawn(spawn_command cmd) {
    fd_pair in, out, err, spec, status;
    auto fail = [&](int error_number, std::string what) {
      for (auto* p : {&in, &out, &err, &spec, &status}) {
        close_fd(p->parent);
        close_fd(p->child);
      }
      caf::anon_send(cmd.owner, io_spawn_failed{cmd.id, error_number, std::move(what)});
    };
    bool pty = cmd.pty.enabled;
    if (pty) {
      std::string what;
      if (!make_pty(out, in, cmd.pty, what)) return fail(errno, what);
      err.child = ::fcntl(out.child, F_DUPFD_CLOEXEC, kHighFd);
    }
    if ((!pty && cmd.stdin_pipe && !make_pipe(in, true)) || (!pty && !make_pipe(out, false)) ||
        (!pty && !make_pipe(err, false)) || !make_pipe(spec, true) || !make_status_channel(status))
      return fail(errno, std::string("pipe2: ") + std::strerror(errno));
    if (!pty && !cmd.stdin_pipe) {
      int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null_fd < 0) return fail(errno, std::string("open /dev/null: ") + std::strerror(errno));
      in.child = ::fcntl(null_fd, F_DUPFD_CLOEXEC, kHighFd);
      ::close(null_fd);
    }
    if (!pty) {
      ::fcntl(out.parent, F_SETPIPE_SZ, kOutputPipeBytes);
      ::fcntl(err.parent, F_SETPIPE_SZ, kOutputPipeBytes);
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in.child, 0);
    posix_spawn_file_actions_adddup2(&actions, out.child, 1);
    posix_spawn_file_actions_adddup2(&actions, err.child, 2);
    posix_spawn_file_actions_adddup2(&actions, spec.child, kSpecFd);
    posix_spawn_file_actions_adddup2(&actions, status.child, kStatusFd);
    // Nothing else of the runtime's reaches the child, CLOEXEC or not.
    posix_spawn_file_actions_addclosefrom_np(&actions, kStatusFd + 1);
    posix_spawn_file_actions_addchdir_np(&actions, "/");

    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);

    std::vector<char*> argv, envp;
    for (auto& a : cmd.argv) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : cmd.envp) envp.push_back(e.data());
    envp.push_back(nullptr);

    pid_t pid = -1;
    int rc = ::posix_spawn(&pid, cmd.program.c_str(), &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) return fail(rc, "posix_spawn " + cmd.program + ": " + std::strerror(rc));
    for (auto* p : {&in, &out, &err, &spec, &status}) close_fd(p->child);

    int pidfd = pidfd_open(pid);
    if (pidfd < 0) {
      int e = errno;
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return fail(e, std::string("pidfd_open (Linux 5.3 or later is required): ") + std::strerror(e));
    }

    auto* p = new process;
    p->loop = this;
    p->id = cmd.id;
    p->pid = pid;
    p->pidfd = pidfd;
    p->owner = cmd.owner;
    p->report_writes = cmd.report_writes;
    p->keep_spec_open = cmd.keep_spec_open;
    if (cmd.egress) egress->set_decider(p->id, cmd.egress);
    if (p->keep_spec_open) ++armed_waiting;
    if (pty) p->pty_master = ::fcntl(out.parent, F_DUPFD_CLOEXEC, 0);
    processes[p->id] = p;
    update_tracked();

    uv_poll_init(&loop, &p->exit_poll, pidfd);
    p->exit_poll.data = p;
    p->exit_poll_open = true;
    p->open_handles++;
    uv_poll_start(&p->exit_poll, UV_READABLE, [](uv_poll_t* h, int, int) {
      auto* proc = static_cast<process*>(h->data);
      proc->loop->on_exit(proc);
    });

    open_stream(p, p->out, stream_kind::out, out.parent, std::move(cmd.out));
    if (!pty) open_stream(p, p->err, stream_kind::err, err.parent, std::move(cmd.err));
    open_status(p, status.parent);
    if (cmd.stdin_pipe || pty) open_pipe(p, p->stdin_pipe, in.parent, p->stdin_open);
    open_pipe(p, p->spec_pipe, spec.parent, p->spec_open);
    write_to(p, p->spec_pipe, std::move(cmd.spec_bytes), true);

    caf::anon_send(p->owner, io_spawned{p->id, pid});
  }

  void open_pipe(process* p, uv_pipe_t& pipe, int fd, bool& open_flag, int ipc = 0) {
    uv_pipe_init(&loop, &pipe, ipc);
    pipe.data = p;
    uv_pipe_open(&pipe, fd);
    open_flag = true;
    p->open_handles++;
  }

  void close_handle(process* p, uv_handle_t* h, bool& open_flag) {
    if (!open_flag) return;
    open_flag = false;
    h->data = p;  // stream pipes carry their stream_state until now
    uv_close(h, [](uv_handle_t* handle) {
      auto* proc = static_cast<process*>(handle->data);
      proc->open_handles--;
      proc->loop->maybe_forget(proc);
    });
  }

  // --- output streams -------------------------------------------------------------------

  void open_stream(process* p, stream_state& s, stream_kind kind, int fd, output_route route) {
    s.owner = p;
    s.kind = kind;
    s.route = std::move(route);
    open_pipe(p, s.pipe, fd, s.open);
    s.pipe.data = &s;
    start_reading(s);
  }

  void start_reading(stream_state& s) {
    s.paused = false;
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&s.pipe),
        [](uv_handle_t* h, std::size_t, uv_buf_t* buf) {
          auto* st = static_cast<stream_state*>(h->data);
          buf->base = st->owner->loop->read_buffer;
          buf->len = kReadBuffer;
          // Paused streams never read past their credit: nothing is dropped, the rest
          // stays in the pipe and the child blocks.
          if (st->route.when_exhausted == overflow_policy::pause)
            buf->len = static_cast<std::size_t>(std::min<std::uint64_t>(kReadBuffer, st->route.credit));
        },
        [](uv_stream_t* h, ssize_t n, const uv_buf_t* buf) {
          auto* st = static_cast<stream_state*>(h->data);
          st->owner->loop->on_read(*st, n, buf);
        });
  }

  void on_read(stream_state& s, ssize_t n, const uv_buf_t* buf) {
    if (n == 0) return;
    if (n == UV_ENOBUFS && s.route.when_exhausted == overflow_policy::pause) {
      uv_read_stop(reinterpret_cast<uv_stream_t*>(&s.pipe));
      s.paused = true;
      return;
    }
    if (n < 0) return end_stream(s);  // EOF, or EIO from a pty whose slave is closed
    auto size = static_cast<std::uint64_t>(n);
    auto kept = std::min<std::uint64_t>(size, s.route.credit);
    if (kept > 0) {
      s.route.credit -= kept;
      caf::anon_send(s.route.sink, io_chunk{s.owner->id, s.kind, std::string(buf->base, kept)});
    }
    if (kept < size) {
      // Past the credit: either count and discard, so the child never blocks, or stop
      // reading so the child blocks on a full pipe (backpressure).
      s.dropped += size - kept;
    }
    if (s.route.credit == 0 && s.route.when_exhausted == overflow_policy::pause) {
      uv_read_stop(reinterpret_cast<uv_stream_t*>(&s.pipe));
      s.paused = true;
    }
  }

  void end_stream(stream_state& s) {
    if (!s.open) return;
    caf::anon_send(s.route.sink, io_eof{s.owner->id, s.kind, s.dropped});
    close_handle(s.owner, reinterpret_cast<uv_handle_t*>(&s.pipe), s.open);
  }

  void do_add_credit(process_id id, stream_kind kind, std::uint64_t bytes) {
    auto* p = find(id);
    if (!p) return;
    auto& s = kind == stream_kind::out ? p->out : p->err;
    s.route.credit += bytes;
    if (s.open && s.paused && s.route.credit > 0) start_reading(s);
  }

  void do_set_overflow(process_id id, stream_kind kind, overflow_policy policy) {
    auto* p = find(id);
    if (!p) return;
    auto& s = kind == stream_kind::out ? p->out : p->err;
    s.route.when_exhausted = policy;
    if (s.open && s.paused && policy == overflow_policy::discard) start_reading(s);
  }

  // --- status channel -------------------------------------------------------------------

  void open_status(process* p, int fd) {
    open_pipe(p, p->status_pipe, fd, p->status_open, 1);
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&p->status_pipe),
        [](uv_handle_t* h, std::size_t, uv_buf_t* buf) {
          auto* proc = static_cast<process*>(h->data);
          buf->base = proc->loop->read_buffer;
          buf->len = kReadBuffer;
        },
        [](uv_stream_t* h, ssize_t n, const uv_buf_t* buf) {
          auto* proc = static_cast<process*>(h->data);
          proc->loop->on_status(proc, n, buf);
        });
  }

  void on_status(process* p, ssize_t n, const uv_buf_t* buf) {
    if (n == 0) return;
    if (n < 0) {
      close_handle(p, reinterpret_cast<uv_handle_t*>(&p->status_pipe), p->status_open);
      return;
    }
    take_egress_listeners(p);
    p->status_buffer.append(buf->base, static_cast<std::size_t>(n));
    // A helper writes short lines; a runaway one must not grow this buffer without bound.
    if (p->status_buffer.size() > 1 << 20) p->status_buffer.clear();
    for (auto nl = p->status_buffer.find('\n'); nl != std::string::npos;
         nl = p->status_buffer.find('\n')) {
      auto line = p->status_buffer.substr(0, nl);
      p->status_buffer.erase(0, nl + 1);
      if (auto parsed = parse_status_line(line)) caf::anon_send(p->owner, io_status{p->id, *parsed});
    }
  }

  // What the helper wrote before it exited is in the pipe now: read it before io_exited is
  // sent, so its owner never sees the exit of a start whose failure it has not heard yet.
  void read_status_now(process* p) {
    if (!p->status_open) return;
    uv_os_fd_t fd = -1;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(&p->status_pipe), &fd) != 0) return;
    for (;;) {
      ssize_t n = ::read(fd, read_buffer, kReadBuffer);  // libuv made it non-blocking
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      uv_buf_t buf = uv_buf_init(read_buffer, static_cast<unsigned>(n));
      on_status(p, n, &buf);
    }
  }

  // The jail's egress listeners ride with the "listeners N" line: the HTTP proxy's first,
  // then the SOCKS5 proxy's (tiers/jail/jail_spec.hpp, egress_ports).
  void take_egress_listeners(process* p) {
    while (uv_pipe_pending_count(&p->status_pipe) > 0) {
      auto kind = p->listeners_received++ == 0 ? listener_kind::http : listener_kind::socks5;
      if (uv_pipe_pending_type(&p->status_pipe) != UV_TCP || p->listeners_received > 2) {
        // Not ours to serve: accept into a throwaway handle just to close the descriptor.
        auto* h = egress->new_listener(p->id, kind);
        uv_accept(reinterpret_cast<uv_stream_t*>(&p->status_pipe), reinterpret_cast<uv_stream_t*>(h));
        egress->drop_listener(h);
        continue;
      }
      auto* h = egress->new_listener(p->id, kind);
      if (uv_accept(reinterpret_cast<uv_stream_t*>(&p->status_pipe), reinterpret_cast<uv_stream_t*>(h)) == 0)
        egress->start_listener(h);
      else
        egress->drop_listener(h);
    }
  }

  // --- stdin ----------------------------------------------------------------------------

  void write_to(process* p, uv_pipe_t& pipe, std::string bytes, bool is_spec) {
    auto* req = new write_req;
    req->bytes = std::move(bytes);
    req->proc = p;
    req->is_spec = is_spec;
    req->req.data = req;
    uv_buf_t buf = uv_buf_init(req->bytes.data(), static_cast<unsigned>(req->bytes.size()));
    if (!is_spec) p->stdin_pending++;
    int rc = uv_write(&req->req, reinterpret_cast<uv_stream_t*>(&pipe), &buf, 1,
                      [](uv_write_t* w, int status) {
                        auto* r = static_cast<write_req*>(w->data);
                        r->proc->loop->on_written(r, status);
                      });
    if (rc != 0) on_written(req, rc);
  }

  void on_written(write_req* req, int status) {
    process* p = req->proc;
    bool is_spec = req->is_spec;
    auto written = req->bytes.size();
    delete req;
    if (is_spec) {
      // EOF on fd 3 tells the helper the spec is complete (a warm jail's: that its launch is).
      if (!p->keep_spec_open || status < 0)
        close_handle(p, reinterpret_cast<uv_handle_t*>(&p->spec_pipe), p->spec_open);
      return;
    }
    p->stdin_pending--;
    if (status < 0 && p->stdin_open) {
      caf::anon_send(p->owner, io_stdin_closed{p->id, -status});
      close_handle(p, reinterpret_cast<uv_handle_t*>(&p->stdin_pipe), p->stdin_open);
      return;
    }
    if (p->report_writes && status >= 0) caf::anon_send(p->owner, io_written{p->id, written});
    finish_stdin_if_done(p);
  }

  void finish_stdin_if_done(process* p) {
    if (p->stdin_open && p->stdin_close_requested && p->stdin_pending == 0) {
      caf::anon_send(p->owner, io_stdin_closed{p->id, 0});
      close_handle(p, reinterpret_cast<uv_handle_t*>(&p->stdin_pipe), p->stdin_open);
    }
  }

  void do_write_stdin(process_id id, std::string bytes) {
    auto* p = find(id);
    if (!p || !p->stdin_open || p->stdin_close_requested) return;
    write_to(p, p->stdin_pipe, std::move(bytes), false);
  }

  void do_close_stdin(process_id id) {
    auto* p = find(id);
    if (!p) return;
    p->stdin_close_requested = true;
    finish_stdin_if_done(p);
  }

  // --- exit -----------------------------------------------------------------------------

  void on_exit(process* p) {
    if (p->reaped) return;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(p->pid), &info, WEXITED | WNOHANG) != 0 || info.si_pid == 0)
      return;
    p->reaped = true;
    read_status_now(p);
    int status = info.si_code == CLD_EXITED ? (info.si_status & 0xff) << 8 : info.si_status & 0x7f;
    p->exit_status = status;
    close_handle(p, reinterpret_cast<uv_handle_t*>(&p->exit_poll), p->exit_poll_open);
    // The jail is gone: its proxy goes with it (each connection reports its end to the
    // decider before the owner hears of the exit, so the audit is complete by then).
    egress->close_process(p->id);
    caf::anon_send(p->owner, io_exited{p->id, status});
  }

  void do_launch(process_id id, std::string bytes) {
    auto* p = find(id);
    if (!p || !p->spec_open) return;
    if (p->keep_spec_open) {
      p->keep_spec_open = false;
      --armed_waiting;
      update_tracked();
    }
    if (bytes.empty()) return close_handle(p, reinterpret_cast<uv_handle_t*>(&p->spec_pipe), p->spec_open);
    write_to(p, p->spec_pipe, std::move(bytes), true);
  }

  void do_adopt(process_id id, caf::actor owner, output_route out, output_route err) {
    auto* p = find(id);
    if (!p) {
      caf::anon_send(owner, io_spawn_failed{id, ESRCH, "the warm jail is gone"});
      return;
    }
    p->owner = std::move(owner);
    for (auto [s, route] : {std::pair{&p->out, &out}, std::pair{&p->err, &err}}) {
      s->route = std::move(*route);
      s->dropped = 0;  // nothing of the program has been read yet: a jail writes no output
      if (!s->open) caf::anon_send(s->route.sink, io_eof{p->id, s->kind, 0});
      else if (s->paused && s->route.credit > 0) start_reading(*s);
    }
    caf::anon_send(p->owner, io_spawned{p->id, p->pid});
    if (p->reaped) caf::anon_send(p->owner, io_exited{p->id, p->exit_status});
  }

  void do_signal(process_id id, int sig, bool whole_group) {
    auto* p = find(id);
    if (!p || p->reaped) return;  // a reaped pid may already belong to someone else
    ::kill(whole_group ? -p->pid : p->pid, sig);
  }

  void do_resize(process_id id, std::uint16_t rows, std::uint16_t cols) {
    auto* p = find(id);
    if (!p || p->pty_master < 0) return;
    winsize ws{};
    ws.ws_row = rows;
    ws.ws_col = cols;
    ::ioctl(p->pty_master, TIOCSWINSZ, &ws);
  }

  void do_release(process_id id) {
    auto* p = find(id);
    if (!p) return;
    p->released = true;
    egress->close_process(p->id);
    for (auto* s : {&p->out, &p->err}) end_stream(*s);
    close_handle(p, reinterpret_cast<uv_handle_t*>(&p->status_pipe), p->status_open);
    close_handle(p, reinterpret_cast<uv_handle_t*>(&p->stdin_pipe), p->stdin_open);
    maybe_forget(p);
  }

  void maybe_forget(process* p) {
    if (!p->released || !p->reaped || p->open_handles > 0) return;
    close_fd(p->pidfd);
    close_fd(p->pty_master);
    if (p->keep_spec_open) --armed_waiting;
    processes.erase(p->id);
    update_tracked();
    delete p;
  }
};

io_loop::io_loop() : impl_(std::make_unique<impl>()) {}
io_loop::~io_loop() = default;

void io_loop::spawn(spawn_command cmd) {
  impl_->post([this, c = std::move(cmd)]() mutable { impl_->do_spawn(std::move(c)); });
}
void io_loop::write_stdin(process_id id, std::string bytes) {
  impl_->post([this, id, b = std::move(bytes)]() mutable { impl_->do_write_stdin(id, std::move(b)); });
}
void io_loop::close_stdin(process_id id) {
  impl_->post([this, id] { impl_->do_close_stdin(id); });
}
void io_loop::launch(process_id id, std::string bytes) {
  impl_->post([this, id, b = std::move(bytes)]() mutable { impl_->do_launch(id, std::move(b)); });
}
void io_loop::adopt(process_id id, caf::actor owner, output_route out, output_route err) {
  impl_->post([this, id, o = std::move(owner), out = std::move(out), err = std::move(err)]() mutable {
    impl_->do_adopt(id, std::move(o), std::move(out), std::move(err));
  });
}
void io_loop::signal(process_id id, int sig, bool whole_group) {
  impl_->post([this, id, sig, whole_group] { impl_->do_signal(id, sig, whole_group); });
}
void io_loop::add_credit(process_id id, stream_kind stream, std::uint64_t bytes) {
  impl_->post([this, id, stream, bytes] { impl_->do_add_credit(id, stream, bytes); });
}
void io_loop::set_overflow(process_id id, stream_kind stream, overflow_policy policy) {
  impl_->post([this, id, stream, policy] { impl_->do_set_overflow(id, stream, policy); });
}
void io_loop::resize(process_id id, std::uint16_t rows, std::uint16_t cols) {
  impl_->post([this, id, rows, cols] { impl_->do_resize(id, rows, cols); });
}
void io_loop::release(process_id id) {
  impl_->post([this, id] { impl_->do_release(id); });
}
std::size_t io_loop::tracked() const { return impl_->tracked_count; }
void io_loop::egress_answer(corral::egress_answer answer) {
  impl_->post([this, a = std::move(answer)] { impl_->egress->on_answer(a); });
}
std::size_t io_loop::egress_connections(process_id id) const {
  std::promise<std::size_t> count;
  auto f = count.get_future();
  impl_->post([this, id, &count] { count.set_value(impl_->egress->open_connections(id)); });
  return f.get();
}

} // namespace corral
