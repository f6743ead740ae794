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
#include "config/toml/toml_profile.hpp"
#include "proto/cli/allow_net.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/daemon_session.hpp"
#include "proto/cli/ending.hpp"
#include "proto/cli/network_notice.hpp"
#include "proto/cli/grant_flags.hpp"
#include "proto/cli/interrupt_watch.hpp"
#include "proto/cli/limit_flags.hpp"
#include "proto/cli/local_tty.hpp"
#include "proto/cli/shell_via_daemon.hpp"
#include "config/write_all.hpp"

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
  --lifetime S    end the terminal after S seconds
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

} // namespace

int shell_command(const std::vector<std::string>& args) {
  terminal_request request;
  boundary_grants grants;
  std::string config_path, connect_socket;
  bool allow_host = false, verbose = false;
  limit_flags limits;
  std::vector<std::string> allow_net;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (auto limit = parse_limit_flag(args, i, limits); !limit) {
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
    auto grant = take_grant_flag(args, i, grants);
    if (!grant) {
      std::cerr << "corral: " << grant.error().message << "\n";
      return kExitRefused;
    }
    if (*grant) continue;
    if (a == "--allow-host") allow_host = true;
    else if (a == "-v") verbose = true;
    else if (a == "--allow-net" && i + 1 < args.size()) {
      auto entries = parse_allow_net(args[++i]);
      if (!entries) {
        std::cerr << "corral: " << entries.error().message << "\n";
        return kExitRefused;
      }
      allow_net.insert(allow_net.end(), entries->begin(), entries->end());
    }
    else if ((a == "--tier" || a == "--config" || a == "--lifetime" || a == "--connect") && i + 1 < args.size()) {
      const auto& v = args[++i];
      if (a == "--tier") request.tier = v;
      else if (a == "--config") config_path = v;
      else if (a == "--connect") connect_socket = v;
      else {
        try {
          request.lifetime = std::chrono::milliseconds(static_cast<long>(std::stod(v) * 1000));
        } catch (const std::exception&) {
          std::cerr << "corral: --lifetime needs a number of seconds\n" << shell_usage();
          return kExitRefused;
        }
      }
    } else {
      std::cerr << "corral: unknown option or missing value '" << a << "'\n" << shell_usage();
      return kExitRefused;
    }
  }
  configure_logging(verbose);
  apply_limit_flags(limits, request);
  if (limits.timeout) request.lifetime = *limits.timeout;
  if (auto s = limit_flags_need_in_process(limits, connect_socket); !s) {
    std::cerr << "corral: " << s.error().message << "\n";
    return kExitRefused;
  }
  if (const char* term = std::getenv("TERM"); term && *term) request.env["TERM"] = term;
  local_size(request.rows, request.cols);
  if (!connect_socket.empty()) {
    for (auto s : {connect_excludes_local_options(config_path, allow_host), connect_excludes_grants(grants)}) {
      if (s) continue;
      std::cerr << "corral: " << s.error().message << "\n";
      return kExitRefused;
    }
    request.env.insert(grants.env.begin(), grants.env.end());  // a request may set variables
    request.network_allow = allow_net_request(allow_net);  // narrows the daemon's list
    return shell_via_daemon(request, connect_socket);
  }

  block_interrupts();  // before the runtime's threads exist (interrupt_watch.hpp)
  auto prof = load_granted_profile(config_path, grants);
  if (!prof) {
    std::cerr << "corral: " << prof.error().describe() << "\n";
    return kExitRefused;
  }
  if (auto s = apply_allow_net(*prof, allow_net); !s) {
    std::cerr << "corral: " << s.error().describe() << "\n";
    return kExitRefused;
  }
  runtime_options ro;
  ro.prof = std::move(*prof);
  ro.warm_jails = 0;  // one request: a jail armed ahead would only compete with it
  ro.allow_host = allow_host;
  auto rt = runtime::start(std::move(ro));
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
            ending = session_ending_line(e, "terminal", request.lifetime, request.lifetime);
            if (e.reason == session_end_reason::failed) failure_detail = e.detail;
            else if (e.reason == session_end_reason::lifetime) status = kExitTimeout;
            else if (e.term_signal) status = 128 + *e.term_signal;
            else status = e.exit_code.value_or(0);
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
