// The gvisor tier: each execution runs in its own gVisor sandbox (`runsc run` of an OCI
// bundle this tier writes, tiers/external/oci_bundle.hpp): a user-space kernel between the program
// and the host's, no network, a read-only root holding only the system directories and
// the granted roots, uid 65534 without capabilities, the request's environment only.
//
// Limits and kill-all come from the execution's cgroup lease: the exec helper (host mode)
// puts runsc into the lease's cgroups before exec and runsc is told to leave cgroups
// alone (--ignore-cgroups), so the sandbox, the gofer and every thread of theirs are
// inside and die with it. The helper stays outside to run `runsc delete --force` and
// remove the bundle and state dir once the tree is gone, on every path.
#pragma once

#include "tiers/external/external_tiers.hpp"

namespace corral {

class gvisor_tier : public external_tier {
public:
  gvisor_tier(const profile& prof, const kernel_features& features, std::chrono::milliseconds deadline);
  tier_capabilities capabilities() const override;
  bool needs_cgroup_lease() const override { return true; }
  expected<launch_plan> plan(const launch_request& request, const lease_grant& grant) const override;

  // Where the per-execution scratch dir appears inside the sandbox (the working directory).
  static constexpr const char* kWorkDir = "/work";
  // The pids limit counts host tasks: runsc's sandbox and gofer with their threads (about
  // 70 here) and one ptrace stub per address space. Below this the sandbox cannot start.
  static constexpr std::uint64_t kMinPids = 128;

  // The per-execution bundle and runsc state, beside (never inside) the scratch dir the
  // sandbox can write.
  static std::string private_dir(const std::string& scratch_dir);

protected:
  tier_status preflight(std::chrono::milliseconds deadline) const override;

private:
  // What only starting runsc shows: its version, then a trial sandbox.
  tier_status trial(const std::string& bin, std::chrono::milliseconds deadline) const;

  gvisor_settings settings_;
  std::vector<root_grant> source_roots_;
  std::vector<root_grant> output_roots_;
  network_mode network_;
  kernel_features features_;
};

} // namespace corral
