#include "proto/cli/run_options.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "config/sizes.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/grant_flags.hpp"

namespace corral::cli {

namespace {

const char* const kRunUsageHead = R"(usage: corral run [options] -- PROGRAM [ARGS...]
       corral run --lang LANG (--code CODE | --file FILE) [options] [-- ARGS...]

Runs one program inside the configured isolation boundary and mirrors its exit status.

options:
  --tier T          the boundary: landlock (default), contained (no namespaces: inside
                    containers and pods), host, gvisor, container, microvm
  --lang L          argv (default with PROGRAM), command (sh -c CODE), python, javascript,
                    typescript (needs a configured runner), rust, c, cpp
  --code CODE       the program text for --lang
  --file FILE       read the program text from FILE
  --stdin FILE      feed FILE to the program's stdin ('-' for this process's stdin)
  --output-cap SIZE bytes kept of each of stdout and stderr, e.g. 1m
  --config FILE     the corral.toml to use (default: ./corral.toml if present)
  --allow-net LIST  network allow-list for this run, e.g. pypi.org,*.pythonhosted.org
                    (sets [sandbox.network] mode = "allowlist" with these allow entries;
                    with --connect it narrows the daemon's allow-list)
  --allow-host      permit the host tier (no isolation; refused when CORRAL_PRODUCTION=1)
  --connect SOCKET  run through a `corral serve` daemon (its profile and opt-ins apply);
                    CORRAL_CONNECT=SOCKET in the environment does the same
  --workspace W     run in the daemon's workspace W (its files at /work stay between runs;
                    needs --connect; see corral workspace --help)
  --changes         with --workspace: list what the program changed there (A/M/D lines on
                    stderr after it ends; the result's "changes" with --json)
  --leave-running   with --workspace: what the program starts in the background (`server &`)
                    lives on in the workspace after it exits (`corral ws ps`, `ws kill`)
  --nodes H:P,H:P   run on the least-loaded of these `corral serve --node-listen` nodes
                    (mutual TLS: needs --node-cert, --node-key and --node-ca; --json adds
                    "node" and the node's "node_descriptor")
  --node-cert PEM --node-key PEM --node-ca PEM   this caller's certificate, key and the CA
  --node-key-passphrase-file FILE   the key's passphrase, if it is encrypted (a 0600 file)
  --json            print the whole result as one JSON object
  -v                debug logging on stderr
limits (with --connect they tighten the daemon's profile):
)";

const char* const kRunUsageTail = R"(
exit status: the program's own; 128+N when signal N ended it; 124 on timeout;
125 when corral refused or could not run the request; 126 when the program was found but
could not be executed; 127 when it was not found; 130, 143 or 129 when corral itself got
SIGINT, SIGTERM or SIGHUP (the program is ended first). Output streams as it arrives; a
non-zero ending of corral's making says why in one line on stderr.
)";

} // namespace

std::string run_usage() {
  return std::string(kRunUsageHead) + kLimitFlagsUsage + kRunUsageTail + kGrantsHeading + kGrantUsage;
}

int refuse_run_flags(const failure& f) {
  std::cerr << "corral: " << f.describe() << "\n" << run_usage();
  return kExitRefused;
}

namespace {

expected<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_failure(failure_kind::invalid_request, "cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

expected<run_options> parse_run_options(const std::vector<std::string>& args) {
  run_options o;
  bool lang_given = false;
  std::size_t i = 0;
  auto value = [&](const std::string& flag) -> expected<std::string> {
    if (i + 1 >= args.size()) return make_failure(failure_kind::invalid_request, flag + " needs a value");
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (auto shared = take_command_flag(args, i, o.flags); !shared) return shared.error();
    else if (*shared) continue;
    expected<std::string> v = std::string();
    if (a == "--json") o.json = true;
    else if (a == "--verbose") o.flags.verbose = true;
    else if (a == "--lang" && (v = value(a))) o.request.language = *v, lang_given = true;
    else if (a == "--code" && (v = value(a))) o.request.code = *v;
    else if (a == "--file" && (v = value(a))) {
      auto text = read_file(*v);
      if (!text) return text.error();
      o.request.code = *text;
    } else if (a == "--stdin" && (v = value(a))) o.stdin_file = *v;
    else if (a == "--changes") o.request.changes = true;
    else if (a == "--leave-running") o.request.leave_running = true;
    else if (a == "--nodes" && (v = value(a))) {
      std::size_t start = 0;
      while (start <= v->size()) {
        auto comma = v->find(',', start);
        auto one = parse_node_address(v->substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (!one) return one.error();
        o.nodes.push_back(*one);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (a == "--node-cert" && (v = value(a))) o.node_credentials.certificate = *v;
    else if (a == "--node-key" && (v = value(a))) o.node_credentials.key = *v;
    else if (a == "--node-ca" && (v = value(a))) o.node_credentials.ca_file = *v;
    else if (a == "--node-key-passphrase-file" && (v = value(a))) {
      auto passphrase = read_passphrase_file(*v);
      if (!passphrase) return passphrase.error();
      o.node_credentials.passphrase = std::move(*passphrase);
    } else if (a == "--output-cap" && (v = value(a))) {
      auto bytes = parse_size(*v);
      if (!bytes) return bytes.error();
      o.request.output_cap = *bytes;
    } else if (!v) {
      return v.error();
    } else if (!a.empty() && a[0] == '-') {
      return make_failure(failure_kind::invalid_request, "unknown option " + a + " (see corral run --help)");
    } else {
      break;  // the program, without "--"
    }
  }
  for (; i < args.size(); ++i) o.request.argv.push_back(args[i]);
  // CORRAL_CONNECT: the operator's standing choice to run through a daemon, as --connect
  // (not with --nodes, which names its own way).
  if (o.flags.connect_socket.empty() && o.nodes.empty())
    if (const char* socket = std::getenv("CORRAL_CONNECT"); socket && *socket) {
      o.flags.connect_socket = socket;
      o.connect_from_environment = true;
    }
  const auto& f = o.flags;
  o.request.tier = f.tier;
  apply_limit_flags(f.limits, o.request);
  if (f.limits.timeout) o.request.timeout = f.limits.timeout;
  if (o.request.leave_running && f.workspace.empty())
    return make_failure(failure_kind::invalid_request,
                        "--leave-running keeps background processes in a workspace: it needs --workspace");
  if (o.request.changes && f.workspace.empty())
    return make_failure(failure_kind::invalid_request, "--changes lists what a run changed in its workspace: it needs --workspace");
  if (auto s = workspace_needs_connect(f); !s) return s.error();  // with --nodes too
  if (!o.nodes.empty() && !f.connect_socket.empty())
    return make_failure(failure_kind::invalid_request, "--nodes and --connect exclude each other");
  if (o.nodes.empty() && !o.node_credentials.empty())
    return make_failure(failure_kind::invalid_request,
                        "--node-cert, --node-key, --node-ca and --node-key-passphrase-file only apply with --nodes");
  if (!f.connect_socket.empty()) {
    if (auto s = carry_to_daemon(f, o.request); !s) {
      auto refused = s.error();
      if (o.connect_from_environment)
        refused.message += " (CORRAL_CONNECT is set: unset it to run in-process with these)";
      return refused;
    }
  } else if (!o.nodes.empty()) {
    if (auto s = connect_excludes_grants(f.grants); !s) return s.error();
    o.request.env.insert(f.grants.env.begin(), f.grants.env.end());  // a request may set variables
  }
  if (!f.allow_net.empty() && !o.nodes.empty())
    return make_failure(failure_kind::invalid_request, "--allow-net has no effect with --nodes: each node's own profile applies");
  if (!lang_given) o.request.language = "argv";
  if (o.request.language != "argv" && o.request.code.empty() && o.request.language != "command")
    return make_failure(failure_kind::invalid_request, "--lang " + o.request.language + " needs --code or --file");
  if (o.request.language == "command" && o.request.code.empty() && !o.request.argv.empty()) {
    // `corral run --lang command -- 'echo hi'` reads naturally too.
    o.request.code = o.request.argv.front();
    o.request.argv.erase(o.request.argv.begin());
  }
  return o;
}

status read_stdin_file(run_options& o) {
  if (o.stdin_file.empty()) return ok();
  expected<std::string> input = std::string();
  if (o.stdin_file == "-") {
    std::ostringstream s;
    s << std::cin.rdbuf();
    input = s.str();
  } else {
    input = read_file(o.stdin_file);
  }
  if (!input) return input.error();
  o.request.stdin_data = *input;
  return ok();
}

} // namespace corral::cli
