// The contained tier: a boundary for places that give no user namespace, no mount and no
// writable cgroup (a container under Docker's default seccomp profile, a Kubernetes pod
// under the `restricted` policy, a kernel that restricts unprivileged user namespaces).
// It needs only Landlock, seccomp and no_new_privs: the exec helper runs in
// jail_mode::contained (tiers/exec_helper/contained_launcher.hpp). It is never chosen
// silently: a profile or request names it, and the landlock tier never degrades into it.
//
// What it holds: reads and writes outside the granted paths (Landlock, on host paths: a
// root is shown where it is), no network (seccomp: no inet socket) or the egress
// allow-list (a connect broker in the helper: tiers/exec_helper/connect_broker.hpp), no
// host unix or netlink socket, a cleared environment, its own session, every descendant
// killed at the end, rlimits for memory (RLIMIT_DATA per process), processes (per uid),
// file size, open files and CPU time, and the unprivileged uid 65534 when the runtime is
// root. What it does not hold, compared with the landlock tier, each plan lists in
// not_enforced (kNotEnforced below).
#pragma once

#include <string>
#include <vector>

#include "tiers/contained/enclosing_cgroup.hpp"
#include "tiers/kernel_features.hpp"
#include "tiers/tier.hpp"

namespace corral {

class contained_tier : public tier {
public:
  contained_tier(const profile& prof, const kernel_features& features);
  std::string name() const override { return "contained"; }
  tier_status available() const override;
  tier_capabilities capabilities() const override;
  bool helper_exits_with_program() const override { return true; }
  bool builds_masked_view() const override { return true; }
  bool enforces_network_allowlist() const override { return true; }
  expected<launch_plan> plan(const launch_request& request, const lease_grant& grant) const override;

  // What this tier leaves open that the landlock tier closes, on this kernel, for `network`.
  static std::vector<std::string> not_enforced(const kernel_features& features, network_mode network);
  // The limits of the cgroup corral runs in (a pod's), read when the tier was built.
  const enclosing_limits& enclosing() const { return enclosing_; }

private:
  std::vector<root_grant> source_roots_;
  std::vector<root_grant> output_roots_;
  std::vector<path_mask> masks_;
  std::string working_dir_;
  network_mode network_;
  landlock_settings settings_;
  kernel_features features_;
  enclosing_limits enclosing_;
};

} // namespace corral
