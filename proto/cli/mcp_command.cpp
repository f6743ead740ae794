// corral mcp: a transparent stdio proxy for an MCP server running inside the boundary. An MCP
// client replaces its server command with `corral mcp -- <the same command>`. Lines pass
// unchanged both ways; corral writes nothing of its own on stdout (logs go to stderr).
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <poll.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/message_framing.hpp"
#include "actors/runtime.hpp"
#include "config/write_all.hpp"
#include "proto/cli/command_flags.hpp"
#include "config/durations.hpp"
#include "config/sizes.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/ending.hpp"
#include "proto/cli/grant_flags.hpp"
#include "proto/cli/interrupt_watch.hpp"
#include "proto/cli/local_runtime.hpp"
#include "proto/cli/gate_report.hpp"
#include "proto/cli/mcp_policy_flags.hpp"
#include "proto/cli/mcp_print_pin.hpp"
#include "proto/cli/mcp_via_daemon.hpp"
#include "proto/cli/network_notice.hpp"

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
  --max-message SIZE  bytes per message, each way: 65536, 512k, 4m (default 4m)
  --idle D            end the server after D without a message either way (500ms, 30s,
                      5m, or seconds)
  --workspace W       with --connect: in the daemon's workspace W (its files at /work)
  --connect SOCKET    run the server in a `corral serve` daemon's stdio session (its
                      profile and opt-ins apply; the limit flags are refused there)
  -v                  debug logging on stderr
limits (--timeout ends the server after that long, as a lifetime):
)";

const char* const kMcpUsageTail = R"(
SIGINT, SIGTERM or SIGHUP to corral end the server first, then corral exits 130, 143 or 129.
)";

std::string mcp_usage() { return std::string(kMcpUsageHead) + kLimitFlagsUsage + kMcpPolicyUsage + kMcpUsageTail; }

struct mcp_options {
  session_request request;
  command_flags flags;
  mcp_policy_flags gateway;
};

expected<mcp_options> parse(const std::vector<std::string>& args) {
  mcp_options o;
  o.request.framing = framing_mode::newline;
  o.request.forward_stderr = true;  // a server's logs belong on the proxy's stderr
  // MCP servers are long-lived by design: only the client ends them.
  o.request.startup_timeout = std::chrono::seconds(60);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--") {
      o.request.argv.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (auto shared = take_command_flag(args, i, o.flags); !shared) return shared.error();
    else if (*shared) continue;
    if (auto gate = take_mcp_policy_flag(args, i, o.gateway); !gate) return gate.error();
    else if (*gate) continue;
    if (a != "--max-message" && a != "--idle")
      return make_failure(failure_kind::invalid_request, "unknown option '" + a + "'");
    if (i + 1 >= args.size()) return make_failure(failure_kind::invalid_request, a + " needs a value");
    // The units of --memory and --timeout: "1m" is a MiB here and a minute there, never a
    // silent 1 byte or 1 second.
    const auto& v = args[++i];
    if (a == "--max-message") {
      auto bytes = parse_size(v);
      if (!bytes || *bytes == 0)
        return make_failure(failure_kind::invalid_request, "--max-message needs a size such as 4m or 65536, not '" + v + "'");
      o.request.max_message_bytes = *bytes;
    } else {
      auto idle = parse_duration(v);
      if (!idle) return make_failure(failure_kind::invalid_request, "--idle: " + idle.error().message);
      o.request.idle_timeout = *idle;
    }
  }
  if (o.request.argv.empty())
    return make_failure(failure_kind::invalid_request, "name the server after --: corral mcp -- SERVER [ARGS...]");
  if (!o.gateway.write_pin.empty() && !o.gateway.print_pin)
    return make_failure(failure_kind::invalid_request, "--write-pin goes with --print-pin");
  const bool gateway_flags = !o.gateway.policy.transparent();
  if (gateway_flags && o.gateway.print_pin)
    return make_failure(failure_kind::invalid_request, "--print-pin lists the server's own tools: leave out the gateway flags");
  if ((gateway_flags || o.gateway.print_pin) && !o.flags.connect_socket.empty())
    return make_failure(failure_kind::invalid_request,
                        "the gateway flags and --print-pin work in-process; through --connect the daemon's profile "
                        "[mcp] is the gateway");
  if (gateway_flags) {
    if (auto s = check_mcp_policy(o.gateway.policy); !s)
      return make_failure(failure_kind::invalid_request, s.error().message);
    o.request.mcp = o.gateway.policy;
  }
  o.flags.mcp_policy_off = o.gateway.print_pin;
  const auto& f = o.flags;
  o.request.tier = f.tier;
  if (!f.connect_socket.empty())
    if (auto s = carry_to_daemon(f, o.request); !s) return s.error();
  if (auto s = limit_flags_need_in_process(f.limits, f.connect_socket); !s) return s.error();
  apply_limit_flags(f.limits, o.request);
  if (f.limits.timeout) o.request.lifetime = *f.limits.timeout;
  return o;
}


// The loop relays the messages itself when both of this process's ends are pipes or
// sockets, as an MCP client's are; a file or terminal goes through the actors instead.
bool relayable(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
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
  if (asks_for_help(args)) {
    std::cerr << mcp_usage() << kGrantsHeading << kGrantUsage;  // stdout belongs to the protocol, even here
    return 0;
  }
  auto options = parse(args);
  if (!options) {
    std::cerr << "corral: " << options.error().describe() << "\n" << mcp_usage() << kGrantsHeading << kGrantUsage;
    return kExitRefused;
  }
  configure_logging(options->flags.verbose);
  if (!options->flags.connect_socket.empty()) return mcp_via_daemon(options->request, options->flags.connect_socket);

  auto rt = start_local_runtime(options->flags);
  if (!rt) {
    std::cerr << "corral: " << rt.error().describe() << "\n";
    return kExitRefused;
  }

  if (options->gateway.print_pin) exit_after(**rt, print_mcp_pin(**rt, options->request, options->gateway.write_pin));

  int status = kExitRefused;
  const bool relay = relayable(STDIN_FILENO) && relayable(STDOUT_FILENO);
  if (relay) {
    options->request.relay_from_fd = STDIN_FILENO;
    options->request.relay_to_fd = STDOUT_FILENO;
  }
  spdlog::debug("corral mcp: messages {}", relay ? "relayed by the I/O loop" : "through the session actor");
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
    std::thread reader;
    if (!relay)
      reader = std::thread(pump_stdin, std::ref((*rt)->system()), session->actor, options->request.max_message_bytes,
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
          [&](session_gate& g) {
            for (auto& w : g.warnings) std::cerr << w << "\n";
            for (auto& line : g.decisions)
              if (auto told = gate_refusal_line(nlohmann::json::parse(line, nullptr, false)); !told.empty())
                std::cerr << told << "\n";
          },
          [&](session_network& n) {
            // stdout is the protocol's: a refused connection is said on stderr, the MCP
            // host's log, as it happens.
            if (auto line = refused_connection_line(n.event); !line.empty()) std::cerr << line << "\n";
          },
          [&](session_refused& r) {
            // Relayed, the refusal names its direction; otherwise it is the server's.
            spdlog::warn("corral mcp: a {}message was not forwarded: {}", relay ? "" : "server ", r.error.message);
          },
          [&](interrupt_atom, int sig) {
            if (!interrupted_by) interrupted_by = sig;
            owner->send(session->actor, cancel_atom::value);
          },
          [&](session_ended& e) {
            done = true;
            status = session_status(e);
            if (e.reason == session_end_reason::failed) {
              std::cerr << "corral: the MCP server failed: " << e.detail << "\n";
              if (e.detail.find("not found") != std::string::npos) status = kExitNotFound;
            }
            if (auto line = session_ending_line(e, "server", options->request.lifetime, options->request.idle_timeout);
                !line.empty())
              std::cerr << line << "\n";
            spdlog::debug("corral mcp: the session ended ({}), status {}", to_string(e.reason), status);
          });
    }
    if (interrupted_by) {
      std::cerr << "corral: got " << signal_name(interrupted_by) << "; the server was ended\n";
      status = 128 + interrupted_by;
    }
    (void)!::write(stop[1], "x", 1);
    if (reader.joinable()) reader.join();
    ::close(stop[0]);
    ::close(stop[1]);
  }
  exit_after(**rt, status);
}

} // namespace corral::cli
