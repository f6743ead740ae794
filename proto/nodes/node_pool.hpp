// An agent host's view of many nodes (proto/nodes/node_listener.hpp): each execution goes to the
// least-loaded node that is still there, over mutual TLS.
//
//   node_pool_options o; o.nodes = {...}; o.tls = {cert, key, ca};
//   auto pool = node_pool::connect(o);          // fails on bad TLS files; an unreachable node
//                                                // shows in status() and in exec's error
//   auto placed = (*pool)->exec(request);       // placed->node, placed->result.isolation
//
// Load: (running + queued) / capacity as the node last reported it, plus what this pool
// sent it since; a report older than `load_ttl` is refreshed in the background.
// Failover: a node whose connection drops (CAF down message, or no heartbeat for the
// middleman's connection timeout) takes no new executions. One that was in flight there
// fails with a clear error and is not retried elsewhere: it may have run, and running
// untrusted code twice is not a retry a caller expects. The pool keeps trying a lost node
// (or one it could not reach at connect) in the background, and places work there again
// once it answers: a restarted node rejoins.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/exec_request.hpp"
#include "actors/exec_result.hpp"
#include "config/failure.hpp"
#include "proto/nodes/node_listener.hpp"
#include "proto/nodes/node_messages.hpp"
#include "proto/nodes/node_tls.hpp"

namespace corral {

// How a node that cannot be reached (lost, or down from the start) is tried again in the
// background: after `first`, then twice as long each time, up to `max`. A zero `first`
// never tries again.
struct reconnect_policy {
  std::chrono::milliseconds first{1000};
  std::chrono::milliseconds max{30000};
};

struct node_pool_options {
  std::vector<node_address> nodes;
  node_tls tls;
  std::chrono::milliseconds load_ttl{250};
  reconnect_policy reconnect;
};

// Where an execution ran and in which boundary: the result's tier and isolation, and the
// node's whole descriptor (with its digest) for an audit log.
struct placed_result {
  std::string node;
  std::string descriptor;
  std::string digest;
  exec_result result;
};

struct node_status {
  std::string node;
  bool available = false;
  std::string unavailable_reason;
  node_load load;              // as last reported
  std::size_t in_flight = 0;   // this pool's executions there now
};

class node_pool {
public:
  static expected<std::unique_ptr<node_pool>> connect(node_pool_options options);
  ~node_pool();  // executions still in flight get an error; the connections close

  // request.live_output is not carried to a node; the result has all the output.
  expected<placed_result> exec(const exec_request& request);
  void exec_async(const exec_request& request, std::function<void(expected<placed_result>)> done);
  std::vector<node_status> status();

  struct impl;

private:
  explicit node_pool(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace corral
