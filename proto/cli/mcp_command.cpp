// corral mcp: a transparent stdio proxy for an MCP server running inside the boundary. An MCP
// client replaces its server command with `corral mcp -- <the same command>`. Lines pass
// unchanged both ways; corral writes nothing of its own on stdout (logs go to stderr).
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <poll.h>
#include <thread>
#include <unistd.h>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/message_framing.hpp"
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
#include "config/write_all.hpp"
#include "proto/cli/mcp_via_daemon.hpp"

namespace corral::cli {

namespace {

const char* const kMcpUsageHead = R"(usage: corral mcp [options] -- SERVER [ARGS...]

Runs an MCP server (stdio transport: one JSON-RPC message per line) inside the boundary and
proxies this process's stdin and stdout to it unchanged; the server's stderr is copied to
this process's stderr. Ends when the client closes stdin
(the server gets EOF, then a grace, then is terminated) or when the server exits, whose exit
status is mirrored.

options:
  --tier T            the boundary (default: the profile's, landlock)
  --config FILE       the corral.toml to use (default: ./corral.toml if present)
  --allow-net LIST    network allow-list for this server, e.g. api.github.com (allowlist mode)
  --allow-host        permit the host tier (no isolation; refused when CORRAL_PRODUCTION=1)
  --max-message SIZE  bytes per message, each way (default 4194304)
  --idle S            end the server after S seconds without a message either way
  --connect SOCKET    run the server in a `corral serve` daemon's stdio session (its
                      profile and opt-ins apply; the limit flags are refused there)
  -v                  debug logging on stderr
limits (--timeout ends the server after that long, as a lifetime):
)";

const char* const kMcpUsageTail = R"(
SIGINT, SIGTERM or SIGHUP to corral end the server first, then corral exits 130, 143 or 129.
)";

std::string mcp_usage() { return std::string(kMcpUsageHead) + kLimitFlagsUsage + kMcpUsageTail; }

struct mcp_options {
  session_request request;
  boundary_grants grants;
  std::string config_path;
  std::string connect_socket;
  limit_flags limits;
  std::vector<std::string> allow_net;
  bool allow_host = false;
  bool verbose = false;
};

expected<mcp_options> parse(const std::vector<std::string>& args) {
  mcp_options o;
  o.request.framing = framing_mode::newline;
  o.request.forward_stderr = true;  // a server's logs belong on the proxy's stderr
  // MCP servers are long-lived by design: only the client ends them.
  o.request.startup_timeout = std::chrono::seconds(60);
  std::size_t i = 0;
  auto value = [&](const std::string& flag) -> expected<std::string> {
    if (i + 1 >= args.size()) return make_failure(failure_kind::invalid_request, flag + " needs a value");
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--") {
      o.request.argv.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (auto limit = parse_limit_flag(args, i, o.limits); !limit) return limit.error();
    else if (*limit) continue;
    if (a == "--allow-host") o.allow_host = true;
    else if (a == "-v") o.verbose = true;
    else if (a == "--tier" || a == "--config" || a == "--max-message" || a == "--idle" || a == "--connect") {
      auto v = value(a);
      if (!v) return v.error();
      try {
        if (a == "--tier") o.request.tier = *v;
        else if (a == "--config") o.config_path = *v;
        else if (a == "--connect") o.connect_socket = *v;
        else if (a == "--max-message") o.request.max_message_bytes = std::stoull(*v);
        else o.request.idle_timeout = std::chrono::milliseconds(static_cast<long>(std::stod(*v) * 1000));
      } catch (const std::exception&) {
        return make_failure(failure_kind::invalid_request, a + " needs a number, not '" + *v + "'");
      }
    } else if (a == "--allow-net") {
      auto v = value(a);
      if (!v) return v.error();
      auto entries = parse_allow_net(*v);
      if (!entries) return entries.error();
      o.allow_net.insert(o.allow_net.end(), entries->begin(), entries->end());
    } else if (auto grant = take_grant_flag(args, i, o.grants); !grant) {
      return grant.error();
    } else if (!*grant) {
      return make_failure(failure_kind::invalid_request, "unknown option '" + a + "'");
    }
  }
  if (o.request.argv.empty())
    return make_failure(failure_kind::invalid_request, "name the server after --: corral mcp -- SERVER [ARGS...]");
  if (!o.connect_socket.empty()) {
    if (auto s = connect_excludes_local_options(o.config_path, o.allow_host); !s) return s.error();
    if (auto s = connect_excludes_grants(o.grants); !s) return s.error();
    o.request.env.insert(o.grants.env.begin(), o.grants.env.end());  // a request may set variables
  }
  if (!o.connect_socket.empty()) o.request.network_allow = allow_net_request(o.allow_net);
  if (auto s = limit_flags_need_in_process(o.limits, o.connect_socket); !s) return s.error();
  apply_limit_flags(o.limits, o.request);
  if (o.limits.timeout) o.request.lifetime = *o.limits.timeout;
  return o;
}


// Reads the client's lines and sends each to the session, waiting on each send (so a
// server that does not read makes the client block too); EOF closes the session.
void pump_stdin(caf::actor_system& sys, caf::actor session, std::size_t max_message, int stop_fd) {
  caf::scoped_actor self{sys};
  frame_decoder decoder(framing_mode::newline, max_message);
  std::vector<decoded_frame> frames;
  char buf[64 * 1024];
  bool open = true;
  while (open) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) return;  // the session ended: nothing more to send
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    frames.clear();
    decoder.feed(std::string_view(buf, static_cast<std::size_t>(n)), frames);
    for (auto& f : frames) {
      if (f.error) {
        spdlog::warn("corral mcp: a client message was not forwarded: {}", f.error->message);
        continue;
      }
      self->request(session, caf::infinite, send_atom::value, std::move(f.message))
          .receive(
              [&](session_reply& r) {
                if (!r.ok) {
                  spdlog::debug("corral mcp: the server did not take a message: {}", r.error.describe());
                  if (r.error.kind != failure_kind::limit_exceeded) open = false;
                }
              },
              [&](caf::error&) { open = false; });
      if (!open) break;
    }
  }
  self->send(session, close_atom::value);
}

} // namespace

int mcp_command(const std::vector<std::string>& args) {
  for (auto& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      std::cerr << mcp_usage() << kGrantsHeading << kGrantUsage;  // stdout belongs to the protocol, even here
      return 0;
    }
  }
  auto options = parse(args);
  if (!options) {
    std::cerr << "corral: " << options.error().describe() << "\n" << mcp_usage() << kGrantsHeading << kGrantUsage;
    return kExitRefused;
  }
  configure_logging(options->verbose);
  if (!options->connect_socket.empty()) return mcp_via_daemon(options->request, options->connect_socket);

  block_interrupts();  // before the runtime's threads exist (interrupt_watch.hpp)
  auto prof = load_granted_profile(options->config_path, options->grants);
  if (!prof) {
    std::cerr << "corral: " << prof.error().describe() << "\n";
    return kExitRefused;
  }
  if (auto s = apply_allow_net(*prof, options->allow_net); !s) {
    std::cerr << "corral: " << s.error().describe() << "\n";
    return kExitRefused;
  }
  runtime_options ro;
  ro.prof = std::move(*prof);
  ro.warm_jails = 0;  // one request: a jail armed ahead would only compete with it
  ro.allow_host = options->allow_host;
  auto rt = runtime::start(std::move(ro));
  if (!rt) {
    std::cerr << "corral: " << rt.error().describe() << "\n";
    return kExitRefused;
  }

  int status = kExitRefused;
  {
    caf::scoped_actor owner{(*rt)->system()};
    auto session = (*rt)->open_session(options->request, caf::actor_cast<caf::actor>(owner));
    if (!session) {
      std::cerr << "corral: " << session.error().describe() << "\n";
      return failure_status(session.error());
    }
    int stop[2];
    if (::pipe2(stop, O_CLOEXEC) < 0) {
      std::cerr << "corral: pipe2: " << std::strerror(errno) << "\n";
      owner->send(session->actor, cancel_atom::value);
      return kExitRefused;
    }
    std::thread reader(pump_stdin, std::ref((*rt)->system()), session->actor, options->request.max_message_bytes,
                       stop[0]);
    interrupt_watch interrupts(caf::actor_cast<caf::actor>(owner));
    int interrupted_by = 0;
    std::uint64_t unacked = 0;
    const std::uint64_t ack_every = std::max<std::uint64_t>(1, options->request.initial_credit / 2);
    bool done = false;
    bool stdout_open = true;
    while (!done) {
      owner->receive(
          [&](session_message& m) {
            m.body.push_back('\n');
            if (stdout_open && !write_all(STDOUT_FILENO, m.body)) {
              // The client is gone: nobody reads the server any more.
              stdout_open = false;
              owner->send(session->actor, close_atom::value);
            }
            if (++unacked >= ack_every) {
              owner->send(session->actor, ack_atom::value, unacked);
              unacked = 0;
            }
          },
          [&](session_stderr& e) { (void)write_all(STDERR_FILENO, e.bytes); },
          [&](session_network& n) {
            // stdout is the protocol's: a refused connection is said on stderr, the MCP
            // host's log, as it happens.
            if (auto line = refused_connection_line(n.event); !line.empty()) std::cerr << line << "\n";
          },
          [&](session_refused& r) { spdlog::warn("corral mcp: a server message was not forwarded: {}", r.error.message); },
          [&](interrupt_atom, int sig) {
            if (!interrupted_by) interrupted_by = sig;
            owner->send(session->actor, cancel_atom::value);
          },
          [&](session_ended& e) {
            done = true;
            if (e.reason == session_end_reason::failed) {
              std::cerr << "corral: the MCP server failed: " << e.detail << "\n";
              status = e.detail.find("not found") != std::string::npos ? kExitNotFound : kExitRefused;
            } else if (e.term_signal) {
              status = 128 + *e.term_signal;
            } else {
              status = e.exit_code.value_or(0);
            }
            if (auto line = session_ending_line(e, "server", options->request.lifetime, options->request.idle_timeout);
                !line.empty())
              std::cerr << line << "\n";
            if (e.reason == session_end_reason::lifetime) status = kExitTimeout;
            spdlog::debug("corral mcp: the session ended ({}), status {}", to_string(e.reason), status);
          });
    }
    if (interrupted_by) {
      std::cerr << "corral: got " << signal_name(interrupted_by) << "; the server was ended\n";
      status = 128 + interrupted_by;
    }
    (void)!::write(stop[1], "x", 1);
    reader.join();
    ::close(stop[0]);
    ::close(stop[1]);
  }
  rt->reset();
  return status;
}

} // namespace corral::cli
