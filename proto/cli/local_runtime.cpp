#include "proto/cli/local_runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <caf/actor_system_config.hpp>

#include "config/toml/toml_profile.hpp"
#include "proto/cli/allow_net.hpp"
#include "proto/cli/interrupt_watch.hpp"

namespace corral::cli {

expected<std::unique_ptr<runtime>> start_local_runtime(const command_flags& f) {
  if (auto s = workspace_needs_connect(f); !s) return s.error();
  block_interrupts();
  auto prof = load_profile_here(f.config_path, f.grants);
  if (!prof) return prof.error();
  if (auto s = apply_allow_net(*prof, f.allow_net); !s) return s.error();
  if (f.mcp_policy_off) prof->mcp = mcp_policy{};
  runtime_options ro;
  ro.prof = std::move(*prof);
  ro.warm_jails = 0;
  ro.spare_helper = spare_helper_mode::once;  // its one launch finds it started
  ro.allow_host = f.allow_host;
  // One request: two workers are enough for its actors (CAF's default, one per core, made
  // 64 threads on a large machine for each one-shot run).
  ro.configure_system = [](caf::actor_system_config& cfg) { cfg.set("scheduler.max-threads", std::size_t{2}); };
  return runtime::start(std::move(ro));
}

void exit_after(runtime& rt, int status) {
  rt.stop_before_exit();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(status);
}

} // namespace corral::cli
