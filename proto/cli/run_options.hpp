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
};

expected<run_options> parse_run_options(const std::vector<std::string>& args);

std::string run_usage();

// --nodes: corral-full places the request through the node pool (CAF's middleman behind
// TLS); the lean `corral` hands its whole invocation to corral-full (proto/cli/lean/).
int run_on_nodes(const run_options& options);

} // namespace corral::cli
