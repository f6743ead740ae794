// corral serve: the daemon (proto/daemon/daemon.hpp; the protocol is proto/PROTOCOL.md).
#include <cstdlib>
#include <grp.h>
#include <optional>
#include <iostream>
#include <unistd.h>

#include "config/toml/toml_profile.hpp"
#include "proto/cli/commands.hpp"
#include "proto/daemon/daemon.hpp"

namespace corral::cli {

namespace {

const char* const kServeUsage = R"(usage: corral serve [--socket PATH] [--socket-mode MODE] [--socket-group GROUP] [--stdio]
                    [--allow-uid U]... [--allow-gid G]...
                    [--config FILE] [--allow-host] [--state-dir DIR]
                    [--idle-timeout S] [-v]
                    [--node-listen HOST:PORT --node-cert PEM --node-key PEM --node-ca PEM
                     [--node-key-passphrase-file FILE]]
                    [--e2b-listen HOST:PORT [--e2b-dir DIR] [--e2b-allow-remote]]

Serves JSON-RPC 2.0 (one message per line; see proto/PROTOCOL.md) on a Unix socket and,
with --stdio, on stdin/stdout. Stops on SIGTERM or SIGINT: nothing new is accepted, each
call in flight is answered (error -32010, "the daemon is stopping"), executions end with
their grace, leases, cgroups, scratch dirs and the socket are removed, and it exits 0; a
second signal closes the connections at once. SIGHUP is ignored (the profile is kept).

options:
  --socket PATH   the socket (default: /run/corral/corral.sock for root, else
                  $XDG_RUNTIME_DIR/corral/corral.sock); created 0600 in a directory only
                  this user can write; a stale socket is replaced, a live one refused.
                  Under systemd's socket activation (corral.socket) the passed socket is
                  served instead, and these three options are refused
  --socket-mode MODE  the socket's permission bits, octal: 0600 (default), 0660 with
                  --socket-group, 0666 for every local user. Others also get search (not
                  list) on its directory
  --socket-group GROUP  the group owning the socket (a name or a gid)
  --stdio         serve one client on stdin/stdout (without --socket: only that, and
                  exit when it hangs up)
  --allow-uid U   admit clients with this uid (repeatable; checked with SO_PEERCRED)
  --allow-gid G   admit clients in this group, primary or supplementary (repeatable;
                  SO_PEERGROUPS)
                  default when neither is given: only this daemon's own uid
                  Who may connect is the socket's mode and group; who is then served is
                  this list, checked on every connection. A user needs both: e.g.
                  --socket-mode 0660 --socket-group corral --allow-gid corral
  --config FILE   the corral.toml to use (default: ./corral.toml if present)
  --allow-host    permit the host tier (no isolation; refused when CORRAL_PRODUCTION=1)
  --idle-timeout S close a connection with nothing in flight after S seconds without a
                  line (default 300; 0: never). At most 64 connections per client uid
  --state-dir DIR the runtime's lease and scratch directory (default as the runtime's;
                  two daemons must not share one: each sweeps the other's leases at start)
  -v              debug logging on stderr

as a node for other machines (corral run --nodes; see proto/PROTOCOL.md, "Nodes"):
  --node-listen HOST:PORT  publish this runtime on a TCP port (port 0: any free one; the
                  bound address is printed on stderr). Always mutual TLS: the three files
                  below are required, and a peer whose certificate does not chain to
                  --node-ca is refused during the handshake
  --node-cert PEM this node's certificate
  --node-key PEM  its private key
  --node-key-passphrase-file FILE  the key's passphrase, when it is encrypted: one line
                  in a file only this user can read (mode 0600 or stricter)
  --node-ca PEM   the CA that signs every node and every caller, and nothing else

the E2B-compatible API (the E2B SDKs with E2B_API_URL and E2B_SANDBOX_URL set to
http://HOST:PORT; README, "Use corral with the E2B SDK"):
  --e2b-listen HOST:PORT  serve it on this TCP address (port 0: any free one; the bound
                  address is printed on stderr). Plain HTTP: loopback only unless
                  --e2b-allow-remote (then put a TLS proxy in front)
  --e2b-dir DIR   its API keys and sandbox records (default: e2b/ beside the workspaces
                  directory); keys come from `corral e2b key add`
)";

bool parse_id(const std::string& text, unsigned long& out) {
  char* end = nullptr;
  out = std::strtoul(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' && text[0] != '-';
}

// A group by name (the group database) or by number.
std::optional<gid_t> parse_group(const std::string& text) {
  unsigned long id = 0;
  if (parse_id(text, id)) return static_cast<gid_t>(id);
  if (auto* g = ::getgrnam(text.c_str())) return g->gr_gid;
  return std::nullopt;
}

std::optional<unsigned> parse_mode(const std::string& text) {
  char* end = nullptr;
  unsigned long mode = std::strtoul(text.c_str(), &end, 8);
  if (text.empty() || *end != '\0' || text[0] == '-' || mode > 07777) return std::nullopt;
  return static_cast<unsigned>(mode);
}

} // namespace

int serve_command(const std::vector<std::string>& args) {
  daemon_options options;
  std::string config_path, state_dir;
  bool allow_host = false, verbose = false, socket_options_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    bool has_value = i + 1 < args.size();
    unsigned long id = 0;
    if (a == "--help" || a == "-h") {
      std::cout << kServeUsage;
      return 0;
    } else if (a == "--socket" && has_value) {
      options.socket_path = args[++i];
      socket_options_given = true;
    } else if (a == "--socket-mode" && has_value) {
      auto mode = parse_mode(args[++i]);
      if (!mode) {
        std::cerr << "corral serve: --socket-mode needs octal permission bits such as 0660, not '" << args[i] << "'\n";
        return kExitRefused;
      }
      options.access.mode = *mode;
      socket_options_given = true;
    } else if (a == "--socket-group" && has_value) {
      auto group = parse_group(args[++i]);
      if (!group) {
        std::cerr << "corral serve: --socket-group: no group '" << args[i] << "' (a name from the group database, or a gid)\n";
        return kExitRefused;
      }
      options.access.group = *group;
      socket_options_given = true;
    } else if (a == "--stdio") {
      options.stdio = true;
    } else if (a == "--allow-uid" && has_value && parse_id(args[i + 1], id)) {
      options.allowed.uids.push_back(static_cast<uid_t>(id));
      ++i;
    } else if (a == "--allow-gid" && has_value && parse_group(args[i + 1])) {
      options.allowed.gids.push_back(*parse_group(args[++i]));
    } else if (a == "--config" && has_value) {
      config_path = args[++i];
    } else if (a == "--idle-timeout" && has_value) {
      try {
        options.idle_timeout = std::chrono::milliseconds(static_cast<long>(std::stod(args[++i]) * 1000));
      } catch (const std::exception&) {
        std::cerr << "corral serve: --idle-timeout needs seconds, not '" << args[i] << "'\n";
        return kExitRefused;
      }
    } else if (a == "--state-dir" && has_value) {
      state_dir = args[++i];
    } else if (a == "--node-listen" && has_value) {
      auto where = parse_node_address(args[++i], true);
      if (!where) {
        std::cerr << "corral serve: " << where.error().describe() << "\n";
        return kExitRefused;
      }
      options.node_listen = *where;
    } else if (a == "--node-cert" && has_value) {
      options.node_credentials.certificate = args[++i];
    } else if (a == "--node-key" && has_value) {
      options.node_credentials.key = args[++i];
    } else if (a == "--node-ca" && has_value) {
      options.node_credentials.ca_file = args[++i];
    } else if (a == "--node-key-passphrase-file" && has_value) {
      auto passphrase = read_passphrase_file(args[++i]);
      if (!passphrase) {
        std::cerr << "corral serve: " << passphrase.error().describe() << "\n";
        return kExitRefused;
      }
      options.node_credentials.passphrase = std::move(*passphrase);
    } else if (a == "--e2b-listen" && has_value) {
      auto where = parse_e2b_address(args[++i]);
      if (!where) {
        std::cerr << "corral serve: " << where.error().describe() << "\n";
        return kExitRefused;
      }
      options.e2b_listen = *where;
    } else if (a == "--e2b-dir" && has_value) {
      options.e2b_dir = args[++i];
    } else if (a == "--e2b-allow-remote") {
      options.e2b_allow_remote = true;
    } else if (a == "--allow-host") {
      allow_host = true;
    } else if (a == "-v" || a == "--verbose") {
      verbose = true;
    } else {
      std::cerr << "corral serve: bad or incomplete option " << a << "\n" << kServeUsage;
      return kExitRefused;
    }
  }
  // Without a listener the files would be ignored, and an operator who forgot --node-listen
  // would believe the machine serves other nodes.
  if (!options.node_listen && !options.node_credentials.empty()) {
    std::cerr << "corral serve: --node-cert, --node-key, --node-ca and --node-key-passphrase-file only apply with --node-listen HOST:PORT; "
                 "add it to serve other machines, or drop them\n";
    return kExitRefused;
  }
  // Refused before the runtime starts: a mode the socket would not get is a typo to fix.
  if (auto s = check_socket_access(options.access); !s) {
    std::cerr << "corral serve: " << s.error().describe() << "\n";
    return kExitRefused;
  }
  // systemd's socket activation: the unit's socket, its mode and its group are the unit's.
  auto activated = activated_socket();
  if (!activated) {
    std::cerr << "corral serve: " << activated.error().describe() << "\n";
    return kExitRefused;
  }
  if (*activated && socket_options_given) {
    std::cerr << "corral serve: systemd passed a socket (corral.socket), so --socket, --socket-mode and --socket-group "
                 "do not apply: set ListenStream=, SocketMode= and SocketGroup= in the unit, or drop the options\n";
    return kExitRefused;
  }
  options.activated_socket = *activated;
  if (options.access.group && (options.access.mode & 060) != 0 && !options.allowed.admits(peer_credentials{0, uid_t(-1), *options.access.group, {}}))
    std::cerr << "corral serve: warning: members of gid " << *options.access.group
              << " can connect to the socket but are refused (not in the allow list): add --allow-gid "
              << *options.access.group << "\n";
  options.service_manager = service_manager_notifier::from_environment();
  configure_logging(verbose);
  auto prof = load_profile_here(config_path);
  if (!prof) {
    std::cerr << "corral serve: " << prof.error().describe() << "\n";
    return kExitRefused;
  }
  runtime_options ro;
  ro.prof = std::move(*prof);
  ro.allow_host = allow_host;
  ro.state_dir = state_dir;
  if (options.socket_path.empty() && !options.stdio && !options.activated_socket)
    options.socket_path = default_socket_path();
  // Said only once the socket is bound and listening: a refused socket dir ends in an error.
  options.listening = [](const std::string& path) {
    std::cerr << "corral serve: listening on " << path << std::endl;
  };
  options.e2b_listening = [](const e2b_listen_address& bound) {
    std::cerr << "corral serve: E2B API listening on http://" << bound.label() << std::endl;
  };
  options.node_listening = [](const node_address& bound) {
    std::cerr << "corral serve: node listening on " << bound.label() << std::endl;
  };
  auto served = run_daemon(std::move(ro), std::move(options));
  if (!served) {
    std::cerr << "corral serve: " << served.error().describe() << "\n";
    return kExitRefused;
  }
  return 0;
}

} // namespace corral::cli
