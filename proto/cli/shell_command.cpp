// corral shell: an interactive terminal inside the boundary for a person. The local tty is
// put in raw mode (restored on every exit path: normal return, error, fatal signal), and
// its window size follows the local one (SIGWINCH).
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <iostream>
#include <poll.h>
#include <thread>
#include <unistd.h>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/runtime.hpp"
#include "config/write_all.hpp"
#include "proto/cli/command_flags.hpp"
#include "config/durations.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/ending.hpp"
#include "proto/cli/grant_flags.hpp"
#include "proto/cli/interrupt_watch.hpp"
#include "proto/cli/local_runtime.hpp"
#include "proto/cli/local_tty.hpp"
#include "proto/cli/network_notice.hpp"
#include "proto/cli/shell_via_daemon.hpp"

namespace corral::cli {

namespace {

const char* const kShellUsageHead = R"(usage: corral shell [options] [-- PROGRAM [ARGS...]]

Opens a terminal inside the boundary running PROGRAM (default /bin/sh) and connects this
terminal to it. Exit status: the program's own; 128+N when signal N ended it; 124 when
its lifetime was reached; 130, 143 or 129 when corral got SIGINT, SIGTERM or SIGHUP (the
terminal is ended and this one restored first).

options:
  --tier T        the boundary (default: the profile's, landlock)
  --config FILE   the corral.toml to use (default: ./corral.toml if present)
  --allow-net LIST network allow-list for this shell, e.g. pypi.org (allowlist mode)
  --allow-host    permit the host tier (no isolation; refused when CORRAL_PRODUCTION=1)
  --lifetime D    end the terminal after D (500ms, 30s, 5m, or seconds)
  --workspace W   with --connect: in the daemon's workspace W (its files at /work).
                  The terminal is W's: it lives on when this client goes or leaves
                  with ctrl-p ctrl-q. With no PROGRAM, attaches to W's latest terminal
                  (taking over typing), or starts one when W has none.
  --terminal T    with --workspace: attach to W's terminal T (as `corral ws terminals W` lists)
  --view          with --workspace: watch W's terminal without typing
  --new           with --workspace: start a new terminal even when W has one
  --connect SOCKET  open the terminal in a `corral serve` daemon (its profile and
                  opt-ins apply; 125 when the daemon goes away; no limit flags)
  -v              debug logging on stderr
limits (--timeout is the same as --lifetime):
)";

std::string shell_usage() { return std::string(kShellUsageHead) + kLimitFlagsUsage; }

// Local keystrokes and window changes to the terminal session; returns when asked to stop.
void forward_input(caf::actor terminal, const winch_pipe& winch, int stop_fd) {
  char buf[4096];
  bool stdin_open = true;
  for (;;) {
    pollfd fds[3] = {{stdin_open ? STDIN_FILENO : -1, POLLIN, 0}, {winch.fd(), POLLIN, 0}, {stop_fd, POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[2].revents) return;
    if (fds[1].revents) {
      winch.drain();
      std::uint16_t rows = 0, cols = 0;
      if (local_size(rows, cols)) caf::anon_send(terminal, resize_atom::value, rows, cols);
    }
    if (fds[0].revents) {
      ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        // Not a terminal, and its input ended: end-of-file for the program, as ^D is.
        stdin_open = false;
        caf::anon_send(terminal, input_atom::value, std::string("\x04"));
        continue;
      }
      caf::anon_send(terminal, input_atom::value, std::string(buf, static_cast<std::size_t>(n)));
    }
  }
}

// With --workspace and no program, a terminal W keeps is attached to (one named with
// --terminal, or the latest, or a new one when W has none); --new or a program starts one.
status choose_terminal(const command_flags& flags, const terminal_request& request, bool fresh, terminal_choice& choice) {
  bool attach_flags = choice.view || !choice.terminal.empty();
  if ((attach_flags || fresh) && flags.workspace.empty())
    return make_failure(failure_kind::invalid_request, "--terminal, --view and --new choose among a workspace's terminals: give --workspace");
  if (fresh && attach_flags) return make_failure(failure_kind::invalid_request, "--new starts a terminal; --terminal and --view attach to one");
  if (!request.argv.empty() && attach_flags)
    return make_failure(failure_kind::invalid_request, "a PROGRAM starts a new terminal; --terminal and --view attach to one");
  choice.attach = !flags.workspace.empty() && !fresh && request.argv.empty();
  choice.open_if_none = choice.attach && choice.terminal.empty() && !choice.view;
  return ok();
}

} // namespace

int shell_command(const std::vector<std::string>& args) {
  terminal_request request;
  command_flags flags;
  terminal_choice choice;
  bool fresh = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (auto limit = parse_limit_flag(args, i, flags.limits); !limit) {
      std::cerr << "corral: " << limit.error().message << "\n" << shell_usage();
      return kExitRefused;
    } else if (*limit) {
      continue;
    }
    const auto& a = args[i];
    if (a == "--") {
      request.argv.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (a == "--help" || a == "-h") {
      std::cout << shell_usage() << kGrantsHeading << kGrantUsage;
      return 0;
    }
    if (a == "--view" || a == "--new") {
      (a == "--view" ? choice.view : fresh) = true;
      continue;
    }
    if (a == "--terminal" && i + 1 < args.size()) {
      choice.terminal = args[++i];
      continue;
    }
    bool value_missing = (is_command_value_flag(a) || a == "--lifetime" || a == "--terminal") && i + 1 >= args.size();
    if (!value_missing) {
      auto shared = take_command_flag(args, i, flags);
      if (!shared) {
        std::cerr << "corral: " << shared.error().message << "\n";
        return kExitRefused;
      }
      if (*shared) continue;
    }
    if (a == "--lifetime" && !value_missing) {
      // As --timeout reads it: "5m" is five minutes, not a silent five seconds.
      auto lifetime = parse_duration(args[++i]);
      if (!lifetime) {
        std::cerr << "corral: --lifetime: " << lifetime.error().message << "\n" << shell_usage();
        return kExitRefused;
      }
      request.lifetime = *lifetime;
    } else {
      std::cerr << "corral: unknown option or missing value '" << a << "'\n" << shell_usage();
      return kExitRefused;
    }
  }
  configure_logging(flags.verbose);
  request.tier = flags.tier;
  apply_limit_flags(flags.limits, request);
  if (flags.limits.timeout) request.lifetime = *flags.limits.timeout;
  if (auto s = limit_flags_need_in_process(flags.limits, flags.connect_socket); !s) {
    std::cerr << "corral: " << s.error().message << "\n";
    return kExitRefused;
  }
  if (const char* term = std::getenv("TERM"); term && *term) request.env["TERM"] = term;
  local_size(request.rows, request.cols);
  if (!flags.connect_socket.empty()) {
    if (auto s = carry_to_daemon(flags, request); !s) {
      std::cerr << "corral: " << s.error().message << "\n";
      return kExitRefused;
    }
    if (auto s = choose_terminal(flags, request, fresh, choice); !s) {
      std::cerr << "corral: " << s.error().message << "\n";
      return kExitRefused;
    }
    return shell_via_daemon(request, flags.connect_socket, choice);
  }

  auto rt = start_local_runtime(flags);
  if (!rt) {
    std::cerr << "corral: " << rt.error().describe() << "\n";
    return kExitRefused;
  }
  auto terminal = (*rt)->open_terminal(request);
  if (!terminal) {
    std::cerr << "corral: " << terminal.error().describe() << "\n";
    return failure_status(terminal.error());
  }

  int status = kExitRefused;
  int stop[2];
  winch_pipe winch;
  if (!winch.ok() || ::pipe2(stop, O_CLOEXEC) < 0) {
    std::cerr << "corral: pipe2: " << std::strerror(errno) << "\n";
    caf::anon_send(terminal->actor, cancel_atom::value);
    return kExitRefused;
  }
  {
    raw_mode raw;
    caf::scoped_actor self{(*rt)->system()};
    self->request(terminal->actor, std::chrono::seconds(30), reattach_atom::value, caf::actor_cast<caf::actor>(self))
        .receive([](std::string& scrollback) { write_all(STDOUT_FILENO, scrollback); }, [](caf::error&) {});
    std::thread input(forward_input, terminal->actor, std::cref(winch), stop[0]);
    interrupt_watch interrupts(caf::actor_cast<caf::actor>(self));
    int interrupted_by = 0;
    bool done = false;
    std::string failure_detail, ending;
    std::vector<std::string> refused;  // said after the terminal is restored, not into the screen
    while (!done) {
      self->receive(
          [&](terminal_output& out) { write_all(STDOUT_FILENO, out.bytes); },
          [&](session_network& n) {
            if (auto line = refused_connection_line(n.event); !line.empty() && refused.size() < kMaxNetworkEvents)
              refused.push_back(std::move(line));
          },
          [&](interrupt_atom, int sig) {
            if (!interrupted_by) interrupted_by = sig;
            self->send(terminal->actor, cancel_atom::value);
          },
          [&](session_ended& e) {
            done = true;
            status = session_status(e);
            ending = session_ending_line(e, "terminal", request.lifetime, request.lifetime);
            if (e.reason == session_end_reason::failed) failure_detail = e.detail;
          });
    }
    (void)!::write(stop[1], "x", 1);
    input.join();
    restore_tty();
    for (auto& line : refused) std::cerr << line << "\n";
    if (!failure_detail.empty()) std::cerr << "corral: the terminal failed: " << failure_detail << "\n";
    if (!ending.empty()) std::cerr << ending << "\n";
    if (interrupted_by) {
      std::cerr << "corral: got " << signal_name(interrupted_by) << "; the terminal was ended\n";
      status = 128 + interrupted_by;
    }
  }
  for (int fd : {stop[0], stop[1]}) ::close(fd);
  rt->reset();
  return status;
}

} // namespace corral::cli
