// `corral run`'s command line, parsed into a request and the runtime's options.
#pragma once

#include <string>
#include <vector>

#include "actors/exec_request.hpp"
#include "config/boundary_grants.hpp"
#include "config/failure.hpp"
#include "proto/nodes/node_listener.hpp"
#include "proto/nodes/node_tls.hpp"
#include "proto/cli/limit_flags.hpp"

namespace corral::cli {

struct run_options {
  exec_request request;
  boundary_grants grants;  // --ro, --rw, --here, --env, --net, --cwd (in-process)
  std::string config_path;
  std::string stdin_file;
  std::string connect_socket;  // run through this daemon instead of in-process
  std::vector<node_address> nodes;  // or on the least-loaded of these nodes
  node_tls node_credentials;
  limit_flags limits;  // also copied onto `request`
  std::vector<std::string> allow_net;  // --allow-net entries (proto/cli/allow_net.hpp)
  bool json = false;
  bool allow_host = false;
  bool verbose = false;
};

expected<run_options> parse_run_options(const std::vector<std::string>& args);

std::string run_usage();

} // namespace corral::cli
