#include "proto/daemon/socket_loop.hpp"

#include <cerrno>
#include <cstdio>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <caf/send.hpp>
#include <spdlog/spdlog.h>
#include <uv.h>

#include "actors/io/loop_inbox.hpp"
#include "proto/daemon/early_signals.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"

namespace corral {

namespace {

constexpr std::size_t kReadBuffer = 64 * 1024;
// After SIGTERM, how long connections get to answer what is in flight before they are
// closed regardless (a second signal closes them at once).
constexpr std::uint64_t kStopBoundMs = 10'000;

// serving ──SIGTERM/SIGINT/stop()──▶ answering (no listener, nothing read; connections
// answer their calls in flight and ask to be closed) ──last connection closed, the bound,
// or a second signal──▶ stopped (every handle closed: run() returns)
enum class loop_phase : std::uint8_t { serving, answering, stopped };

struct command {
  enum class kind { write, close, stop } what;
  connection_id id = 0;
  std::string bytes;
};

// Whether something accepts connections on `path` right now (a live daemon, not a stale
// socket file left by a killed one).
bool someone_listens(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  bool live = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return live;
}

std::string octal(unsigned mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", mode);
  return text;
}

status prepare_socket_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST)
    return make_failure(failure_kind::config_error, "mkdir " + dir + ": " + std::strerror(errno));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) < 0 || !S_ISDIR(st.st_mode))
    return make_failure(failure_kind::config_error, dir + " is not a directory");
  // Anyone who can write the directory can replace the socket with their own.
  if (st.st_uid != ::geteuid() || (st.st_mode & 022) != 0)
    return make_failure(failure_kind::config_error,
                        "the socket's directory " + dir + " must be owned by uid " + std::to_string(::geteuid()) +
                            " and writable by nobody else (mode 0700 is what corral creates)");
  return ok();
}

} // namespace

struct socket_loop::impl {
  struct client {
    impl* owner = nullptr;
    connection_id id = 0;
    uid_t uid = 0;
    caf::actor actor;
    uv_any_handle a{};  // the socket, or stdin
    uv_any_handle b{};  // stdout (stdio only)
    bool two_handles = false;
    int open_handles = 0;
    rpc::line_splitter splitter;
    std::size_t pending = 0;
    bool closing = false;
    uv_shutdown_t shutdown_req{};
    std::string reason;
    std::vector<char> buffer = std::vector<char>(kReadBuffer);

    explicit client(std::size_t max_line) : splitter(max_line) {}
    uv_stream_t* in() { return reinterpret_cast<uv_stream_t*>(&a); }
    uv_stream_t* out() { return reinterpret_cast<uv_stream_t*>(two_handles ? &b : &a); }
  };

  struct write_request {
    uv_write_t req;
    std::string bytes;
    client* owner;
  };

  socket_loop* self = nullptr;
  socket_loop_limits limits;
  accept_fn accept;
  uv_loop_t loop{};
  uv_async_t wake{};
  uv_signal_t sigterm{}, sigint{}, sighup{};
  uv_timer_t stop_timer{};
  std::unique_ptr<uv_pipe_t> listener;
  std::string path;
  bool owns_path = false;  // bound here, so removed at the stop (not a socket systemd passed)
  access_list allowed;
  std::map<connection_id, std::unique_ptr<client>> clients;
  connection_id next_id = 1;
  loop_phase phase = loop_phase::serving;
  bool ran = false;

  loop_inbox<command> inbox{&wake};  // write, close and stop from other threads

  void post(command c) { inbox.post(std::move(c)); }

  void drain() {
    auto batch = inbox.take();
    for (auto& c : batch) {
      if (c.what == command::kind::stop) {
        begin_stop(false);
        continue;
      }
      auto it = clients.find(c.id);
      if (it == clients.end()) continue;
      if (c.what == command::kind::close) close_after_writes(it->second.get(), c.bytes);
      else send(it->second.get(), std::move(c.bytes));
    }
  }

  void send(client* c, std::string bytes) {
    if (c->closing || bytes.empty()) return;
    auto* w = new write_request{{}, std::move(bytes), c};
    uv_buf_t buf = uv_buf_init(w->bytes.data(), static_cast<unsigned>(w->bytes.size()));
    c->pending += w->bytes.size();
    int rc = uv_write(&w->req, c->out(), &buf, 1, [](uv_write_t* req, int status) {
      auto* w = reinterpret_cast<write_request*>(req);
      w->owner->pending -= w->bytes.size();
      if (status < 0 && status != UV_ECANCELED)
        w->owner->owner->close_client(w->owner, std::string("writing to the client: ") + uv_strerror(status));
      delete w;
    });
    if (rc < 0) {
      c->pending -= w->bytes.size();
      delete w;
      close_client(c, std::string("writing to the client: ") + uv_strerror(rc));
      return;
    }
    // A client that never reads must not make the daemon hold its output without bound.
    if (uv_stream_get_write_queue_size(c->out()) > limits.max_pending_output)
      close_client(c, "the client did not read its output (more than " +
                          std::to_string(limits.max_pending_output) + " bytes pending)");
  }

  // The connection asked to be closed: what it wrote before goes out first (a shutdown
  // completes after the queued writes), then the handles close.
  void close_after_writes(client* c, std::string reason) {
    if (c->closing) return;
    c->shutdown_req.data = c;
    c->reason = std::move(reason);
    uv_read_stop(c->in());
    if (uv_shutdown(&c->shutdown_req, c->out(), [](uv_shutdown_t* req, int) {
          auto* c = static_cast<client*>(req->data);
          c->closing = false;  // close_client finishes it
          c->owner->close_client(c, c->reason);
        }) == 0) {
      c->closing = true;
      return;
    }
    close_client(c, c->reason);
  }

  void close_client(client* c, std::string reason) {
    if (c->closing) return;
    c->closing = true;
    c->reason = std::move(reason);
    uv_read_stop(c->in());
    auto closed = [](uv_handle_t* h) {
      auto* c = static_cast<client*>(h->data);
      if (--c->open_handles > 0) return;
      auto* owner = c->owner;
      if (c->actor) caf::anon_send(c->actor, conn_closed{c->reason});
      bool was_stdio = c->two_handles;
      owner->clients.erase(c->id);
      owner->self->connections_ = owner->clients.size();
      // Serving stdio alone: the daemon's one client is gone, so is its reason to run.
      if (was_stdio && !owner->listener) owner->begin_stop(false);
      else if (owner->phase == loop_phase::answering && owner->clients.empty()) owner->finish_stop();
    };
    uv_close(reinterpret_cast<uv_handle_t*>(&c->a), closed);
    if (c->two_handles) uv_close(reinterpret_cast<uv_handle_t*>(&c->b), closed);
  }

  void start_reading(client* c) {
    uv_read_start(
        c->in(),
        [](uv_handle_t* h, size_t, uv_buf_t* buf) {
          auto* c = static_cast<client*>(h->data);
          *buf = uv_buf_init(c->buffer.data(), static_cast<unsigned>(c->buffer.size()));
        },
        [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
          auto* c = static_cast<client*>(s->data);
          if (n == UV_EOF && c->two_handles && c->actor) {
            // A stdio client that ends its input still reads its answers: the connection
            // closes once it has answered what came before the EOF.
            uv_read_stop(c->in());
            caf::anon_send(c->actor, conn_input_ended{});
            return;
          }
          if (n < 0) {
            c->owner->close_client(c, n == UV_EOF ? "the client hung up" : std::string("reading: ") + uv_strerror(static_cast<int>(n)));
            return;
          }
          for (auto& piece : c->splitter.feed(std::string_view(buf->base, static_cast<std::size_t>(n)))) {
            if (piece.oversized) caf::anon_send(c->actor, conn_oversized{c->splitter.max_line()});
            else caf::anon_send(c->actor, conn_line{std::move(piece.line)});
          }
        });
  }

  client* add_client() {
    auto c = std::make_unique<client>(limits.max_line);
    c->owner = this;
    c->id = next_id++;
    auto* raw = c.get();
    clients[raw->id] = std::move(c);
    self->connections_ = clients.size();
    return raw;
  }

  // Refusal: one error line, written now if the socket takes it, then the hang-up.
  void refuse(client* c, int code, const std::string& message) {
    auto line = rpc::error_line(rpc::error{code, message, nullptr, nullptr});
    uv_buf_t buf = uv_buf_init(line.data(), static_cast<unsigned>(line.size()));
    uv_try_write(c->out(), &buf, 1);
    close_client(c, message);
  }

  void on_connection() {
    auto* c = add_client();
    uv_pipe_init(&loop, &c->a.pipe, 0);
    c->a.handle.data = c;
    c->open_handles = 1;
    if (uv_accept(reinterpret_cast<uv_stream_t*>(listener.get()), c->in()) < 0)
      return close_client(c, "accept failed");
    uv_os_fd_t fd;
    uv_fileno(reinterpret_cast<uv_handle_t*>(&c->a), &fd);
    auto peer = peer_of(fd);
    if (!peer) return refuse(c, rpc::kInternalError, peer.error().message);
    if (!allowed.admits(*peer)) {
      spdlog::warn("refused a client: uid {} gid {} (pid {}) is not in the allow list ({})", peer->uid, peer->gid,
                   peer->pid, allowed.describe());
      return refuse(c, rpc::kRefused,
                    "uid " + std::to_string(peer->uid) + " is not allowed to use this corral daemon");
    }
    if (clients.size() > limits.max_connections)
      return refuse(c, rpc::kLimitExceeded,
                    "too many clients (" + std::to_string(limits.max_connections) + "); try again later");
    std::size_t same_uid = 0;
    for (auto& [cid, other] : clients) same_uid += other.get() != c && !other->closing && other->uid == peer->uid;
    if (same_uid >= limits.max_connections_per_uid)
      return refuse(c, rpc::kLimitExceeded,
                    "too many connections for uid " + std::to_string(peer->uid) + " (" +
                        std::to_string(limits.max_connections_per_uid) + "); close some or try again later");
    c->uid = peer->uid;
    c->actor = accept(c->id, *peer);
    if (!c->actor) return close_client(c, "no connection actor");
    start_reading(c);
  }

  // First call: stop listening and reading, and let each connection answer what it has in
  // flight. A second call (a second signal, the bound) closes everything now.
  void begin_stop(bool at_once) {
    if (phase == loop_phase::stopped) return;
    if (phase == loop_phase::answering) at_once = true;
    if (phase == loop_phase::serving) {
      phase = loop_phase::answering;
      if (listener) {
        uv_close(reinterpret_cast<uv_handle_t*>(listener.get()), nullptr);
        if (owns_path) ::unlink(path.c_str());
      }
      for (auto& [id, c] : clients) {
        if (c->closing) continue;
        uv_read_stop(c->in());
        if (c->actor) caf::anon_send(c->actor, conn_stopping{});
      }
      uv_timer_start(&stop_timer, [](uv_timer_t* t) {
        spdlog::warn("stopping: connections still open after {} ms are closed", kStopBoundMs);
        static_cast<impl*>(t->loop->data)->finish_stop();
      }, kStopBoundMs, 0);
    }
    if (at_once || clients.empty()) finish_stop();
  }

  void finish_stop() {
    if (phase == loop_phase::stopped) return;
    phase = loop_phase::stopped;
    std::vector<client*> all;
    for (auto& [id, c] : clients) all.push_back(c.get());
    for (auto* c : all) close_client(c, "the daemon is stopping");
    inbox.close();
    uv_close(reinterpret_cast<uv_handle_t*>(&wake), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&sigterm), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&sigint), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&sighup), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&stop_timer), nullptr);
  }
};

socket_loop::socket_loop(socket_loop_limits limits, accept_fn accept) : impl_(std::make_unique<impl>()) {
  impl_->self = this;
  impl_->limits = limits;
  impl_->accept = std::move(accept);
  uv_loop_init(&impl_->loop);
  impl_->loop.data = impl_.get();
  uv_async_init(&impl_->loop, &impl_->wake, [](uv_async_t* a) { static_cast<impl*>(a->loop->data)->drain(); });
  uv_signal_init(&impl_->loop, &impl_->sigterm);
  uv_signal_init(&impl_->loop, &impl_->sigint);
  uv_signal_init(&impl_->loop, &impl_->sighup);
  uv_timer_init(&impl_->loop, &impl_->stop_timer);
}

socket_loop::~socket_loop() {
  if (impl_->phase != loop_phase::stopped) {
    impl_->begin_stop(true);
    uv_run(&impl_->loop, UV_RUN_DEFAULT);
  }
  uv_loop_close(&impl_->loop);
}

status check_socket_access(const socket_access& access) {
  if ((access.mode & ~0666u) != 0 || (access.mode & 0600u) != 0600u)
    return make_failure(failure_kind::config_error,
                        "socket mode " + octal(access.mode) + " must keep 0600 (the daemon's own user) and add at most 0066");
  return ok();
}

status socket_loop::listen(const std::string& path, access_list allowed, socket_access access) {
  if (path.size() >= sizeof(sockaddr_un{}.sun_path))
    return make_failure(failure_kind::config_error, "the socket path " + path + " is longer than a Unix socket allows (107 bytes)");
  if (auto s = check_socket_access(access); !s) return s;
  auto dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (auto s = prepare_socket_dir(dir); !s) return s;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      return make_failure(failure_kind::config_error, path + " exists and is not a socket; remove it or choose another --socket");
    if (someone_listens(path))
      return make_failure(failure_kind::refused, "another daemon is already serving " + path);
    ::unlink(path.c_str());  // left by a daemon that was killed
  }
  auto pipe = std::make_unique<uv_pipe_t>();
  uv_pipe_init(&impl_->loop, pipe.get(), 0);
  // Created 0600 from the start (umask), not chmod-ed afterwards: no window in which
  // another user could connect. Wider modes are given once the group is right.
  auto old_mask = ::umask(0177);
  int rc = uv_pipe_bind(pipe.get(), path.c_str());
  ::umask(old_mask);
  if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(pipe.get()), 128, [](uv_stream_t* server, int status) {
    if (status == 0) static_cast<impl*>(server->loop->data)->on_connection();
  });
  auto fail = [&](failure f) -> status {
    uv_close(reinterpret_cast<uv_handle_t*>(pipe.release()), [](uv_handle_t* h) { delete reinterpret_cast<uv_pipe_t*>(h); });
    if (rc == 0) ::unlink(path.c_str());
    return f;
  };
  if (rc < 0) return fail(make_failure(failure_kind::internal, "listening on " + path + ": " + uv_strerror(rc)));
  if (access.group && ::chown(path.c_str(), static_cast<uid_t>(-1), *access.group) < 0)
    return fail(make_failure(failure_kind::config_error, "giving the socket " + path + " to gid " +
                                                             std::to_string(*access.group) + ": " + std::strerror(errno) +
                                                             " (a non-root daemon can only give it a group it is in)"));
  if (::chmod(path.c_str(), access.mode) < 0)
    return fail(make_failure(failure_kind::internal, "chmod " + path + ": " + std::strerror(errno)));
  // Others must reach the socket by path: search, but neither list nor write, the directory.
  if ((access.mode & 066u) != 0 && ::lstat(dir.c_str(), &st) == 0 && (st.st_mode & 011) != 011 &&
      ::chmod(dir.c_str(), (st.st_mode & 07777) | 011) < 0)
    return fail(make_failure(failure_kind::internal, "chmod o+x " + dir + ": " + std::strerror(errno)));
  impl_->listener = std::move(pipe);
  impl_->path = path;
  impl_->owns_path = true;
  impl_->allowed = std::move(allowed);
  return ok();
}

status socket_loop::listen_on(int fd, access_list allowed) {
  auto pipe = std::make_unique<uv_pipe_t>();
  uv_pipe_init(&impl_->loop, pipe.get(), 0);
  int rc = uv_pipe_open(pipe.get(), fd);
  if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(pipe.get()), 128, [](uv_stream_t* server, int status) {
    if (status == 0) static_cast<impl*>(server->loop->data)->on_connection();
  });
  if (rc < 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(pipe.release()), [](uv_handle_t* h) { delete reinterpret_cast<uv_pipe_t*>(h); });
    return make_failure(failure_kind::internal, std::string("listening on the passed socket: ") + uv_strerror(rc));
  }
  char name[sizeof(sockaddr_un{}.sun_path) + 1] = {};
  std::size_t len = sizeof name - 1;
  impl_->path = uv_pipe_getsockname(pipe.get(), name, &len) == 0 ? std::string(name, len) : "(passed socket)";
  impl_->owns_path = false;
  impl_->listener = std::move(pipe);
  impl_->allowed = std::move(allowed);
  return ok();
}

std::string socket_loop::listening_path() const { return impl_->path; }

status socket_loop::attach_stdio() {
  auto* c = impl_->add_client();
  c->two_handles = true;
  auto init = [&](uv_any_handle& h, int fd, bool readable) -> int {
    auto kind = uv_guess_handle(fd);
    int rc;
    if (kind == UV_TTY) {
      rc = uv_tty_init(&impl_->loop, &h.tty, fd, readable);
    } else if (kind == UV_NAMED_PIPE) {
      rc = uv_pipe_init(&impl_->loop, &h.pipe, 0);
      if (rc == 0) rc = uv_pipe_open(&h.pipe, fd);
    } else {
      return UV_EINVAL;
    }
    if (rc == 0) {
      h.handle.data = c;
      ++c->open_handles;
    }
    return rc;
  };
  int rc = init(c->a, STDIN_FILENO, true);
  if (rc == 0) rc = init(c->b, STDOUT_FILENO, false);
  if (rc < 0) {
    impl_->clients.erase(c->id);
    return make_failure(failure_kind::config_error,
                        std::string("--stdio needs stdin and stdout to be pipes, sockets or a terminal: ") + uv_strerror(rc));
  }
  c->actor = impl_->accept(c->id, peer_credentials{::getppid(), ::getuid(), ::getgid(), {}});
  impl_->start_reading(c);
  return ok();
}

void socket_loop::run() {
  auto on_signal = [](uv_signal_t* h, int signum) {
    auto* p = static_cast<impl*>(h->loop->data);
    p->self->signal_ = signum;
    spdlog::info("signal {}: {}", signum,
                 p->phase == loop_phase::serving ? "stopping; answering the calls in flight" : "stopping now");
    p->begin_stop(false);
  };
  uv_signal_start(&impl_->sigterm, on_signal, SIGTERM);
  uv_signal_start(&impl_->sigint, on_signal, SIGINT);
  // A daemon keeps the profile it started with (executions and sessions are bound to it):
  // SIGHUP, which a closing terminal or a careless `kill -HUP` sends, changes nothing.
  uv_signal_start(&impl_->sighup, [](uv_signal_t*, int) {
    spdlog::info("SIGHUP ignored: restart the daemon to load a changed profile");
  }, SIGHUP);
  // One that came while the daemon started (early_signals.hpp): stop as for it now.
  if (int held = held_stop_signal()) {
    signal_ = held;
    spdlog::info("signal {} while starting: stopping", held);
    impl_->begin_stop(false);
  }
  impl_->ran = true;
  uv_run(&impl_->loop, UV_RUN_DEFAULT);
}

void socket_loop::stop() { impl_->post({command::kind::stop, 0, {}}); }

void socket_loop::write(connection_id id, std::string bytes) {
  impl_->post({command::kind::write, id, std::move(bytes)});
}

void socket_loop::close(connection_id id, std::string reason) {
  impl_->post({command::kind::close, id, std::move(reason)});
}

} // namespace corral
