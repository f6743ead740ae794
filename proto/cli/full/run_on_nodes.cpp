// `corral run --nodes` in corral-full: the node pool (CAF's middleman behind mutual TLS)
// places the request on the least-loaded node.
#include <iostream>

#include <spdlog/spdlog.h>

#include "proto/cli/ending.hpp"
#include "proto/cli/run_options.hpp"
#include "proto/cli/run_result.hpp"
#include "proto/nodes/node_pool.hpp"

namespace corral::cli {

// --nodes: the least-loaded node runs it; which node and its boundary go with --json.
int run_on_nodes(const run_options& options) {
  node_pool_options po;
  po.nodes = options.nodes;
  po.tls = options.node_credentials;
  auto pool = node_pool::connect(po);
  if (!pool) return refuse(pool.error(), options.json);
  auto placed = (*pool)->exec(options.request);
  if (!placed) return refuse(placed.error(), options.json);
  spdlog::debug("ran on node {} ({})", placed->node, placed->digest);
  if (auto line = ending_line(placed->result, nullptr); !line.empty()) std::cerr << line << "\n";
  nlohmann::json extra{{"node", placed->node}};
  extra["node_descriptor"] = nlohmann::json::parse(placed->descriptor, nullptr, false);
  return print_result(placed->result, options.json, extra);
}

} // namespace corral::cli
