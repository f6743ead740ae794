// The embeddable runtime: what an agent host links against. One actor system, one libuv
// I/O thread, one supervisor, and the frozen profile.
//
//   auto rt = corral::runtime::start(options);       // detects the kernel, sweeps leftovers
//   auto result = (*rt)->exec(request);              // blocking; or exec_async with a callback
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "actors/exec_request.hpp"
#include "actors/exec_result.hpp"
#include "config/failure.hpp"
#include "config/profile.hpp"
#include "tiers/kernel_features.hpp"
#include "tiers/tier_registry.hpp"

namespace corral {

struct runtime_options {
  profile prof;
  // The --allow-host flag; CORRAL_ALLOW_HOST=1 in the environment counts too, and
  // CORRAL_PRODUCTION=1 refuses the host tier whatever is set here.
  bool allow_host = false;
  std::string exec_helper;  // empty: beside the running program, then the installed path
  std::string state_dir;    // empty: /run/corral for root, else $XDG_RUNTIME_DIR/corral or /tmp/corral-<uid>
  std::size_t max_concurrent = 16;
};

class runtime {
public:
  static expected<std::unique_ptr<runtime>> start(runtime_options options);
  ~runtime();  // cancels every execution and waits for their leases to finish

  expected<exec_result> exec(const exec_request& request);
  void exec_async(const exec_request& request, std::function<void(expected<exec_result>)> done);

  caf::actor_system& system();
  caf::actor supervisor() const;
  const kernel_features& features() const;
  const tier_registry& tiers() const;
  const profile& frozen_profile() const;
  const std::string& state_dir() const;
  // Processes the I/O loop still tracks (tests: nothing may be left behind).
  std::size_t tracked_processes() const;

private:
  struct impl;
  explicit runtime(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

// The exec helper next to `program_dir`, or the installed one; empty when neither exists.
std::string find_exec_helper();

} // namespace corral
