// `corral run`'s command line, parsed into a request and the runtime's options.
#pragma once

#include <string>
#include <vector>

#include "actors/exec_request.hpp"
#include "config/failure.hpp"
#include "proto/cli/command_flags.hpp"
#include "proto/nodes/node_address.hpp"
#include "proto/nodes/node_tls.hpp"

namespace corral::cli {

struct run_options {
  exec_request request;
  command_flags flags;  // the limits are also copied onto `request`
  std::string stdin_file;
  std::vector<node_address> nodes;  // or on the least-loaded of these nodes
  node_tls node_credentials;
  bool json = false;
  bool connect_from_environment = false;  // connect_socket came from CORRAL_CONNECT
};

// The flags, checked. With neither --connect nor --nodes, CORRAL_CONNECT names the daemon
// as --connect would. Reads nothing: --stdin's file is read by read_stdin_file, once the
// caller knows it is the one that runs the request.
expected<run_options> parse_run_options(const std::vector<std::string>& args);

// --stdin FILE ('-': this process's stdin) into the request.
status read_stdin_file(run_options& options);

// `corral run --help`: the flags, the limits and the grants.
std::string run_usage();

// A refused command line: "corral: WHY" and the usage on stderr; 125.
int refuse_run_flags(const failure& f);

// --nodes: corral-full places the request through the node pool (CAF's middleman behind
// TLS); the lean `corral` hands its whole invocation to corral-full (proto/cli/lean/).
int run_on_nodes(const run_options& options);

} // namespace corral::cli
