#include "actors/io/loop_internals.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/send.hpp>

#include "tiers/jail/jail_spec.hpp"

namespace corral {

namespace {

// Bigger pipes mean fewer wake-ups when a child floods its output.
constexpr int kOutputPipeBytes = 1 << 20;

} // namespace

void io_loop::impl::do_spawn(spawn_command cmd) {
  if (spare_fits(cmd)) {
    // The next spare is spawned after this launch's own helper is on its way.
    bool taken = take_spare(cmd);
    if (!taken) do_spawn_helper(std::move(cmd));
    return after_fitting_launch();
  }
  do_spawn_helper(std::move(cmd));
}

void io_loop::impl::do_spawn_helper(spawn_command cmd) {
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

void io_loop::impl::on_exit(process* p) {
  if (p->reaped) return;
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(p->pid), &info, WEXITED | WNOHANG) != 0 || info.si_pid == 0)
    return;
  p->reaped = true;
  read_status_now(p);
  int status = info.si_code == CLD_EXITED ? (info.si_status & 0xff) << 8 : info.si_status & 0x7f;
  p->exit_status = status;
  close_handle(p, reinterpret_cast<uv_handle_t*>(&p->exit_poll), p->exit_poll_open);
  if (p == spare) return spare_exited(p);
  // The jail is gone: its proxy goes with it (each connection reports its end to the
  // decider before the owner hears of the exit, so the audit is complete by then).
  egress->close_process(p->id);
  caf::anon_send(p->owner, io_exited{p->id, status});
}

} // namespace corral
