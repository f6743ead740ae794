#include "tiers/cgroups/leased_limits.hpp"

#include <algorithm>

namespace corral {

bool has_cgroup_controller(const kernel_features& features, const std::string& name) {
  auto& c = features.cgroup_controllers;
  return std::find(c.begin(), c.end(), name) != c.end();
}

tier_capabilities leased_capabilities(bool available, const kernel_features& features, network_mode network) {
  tier_capabilities c;
  c.timeout = available;
  c.memory = available && has_cgroup_controller(features, "memory");
  c.pids = available && has_cgroup_controller(features, "pids");
  c.cpu = available && has_cgroup_controller(features, "cpu");
  c.network_isolation = available && network == network_mode::none;
  c.filesystem_read_isolation = available;
  c.filesystem_write_isolation = available;
  c.environment_isolation = available;
  return c;
}

std::string held_limits(const limits& asked, const kernel_features& features, std::vector<std::string>& not_enforced) {
  std::string held;
  auto want = [&](bool is_asked, const char* name) {
    if (!is_asked) return;
    if (has_cgroup_controller(features, name)) held += (held.empty() ? "" : ", ") + std::string(name);
    else not_enforced.push_back(std::string(name) + "_limit");
  };
  want(asked.memory_bytes.has_value(), "memory");
  want(asked.pids.has_value(), "pids");
  want(asked.cpu_cores.has_value(), "cpu");
  return held.empty() ? "" : " (" + held + ")";
}

} // namespace corral
