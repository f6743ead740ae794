// The container tier: each execution is one `<engine> run --rm` (podman or docker CLI) of
// the configured image, with no network, a read-only root, uid 65534 without
// capabilities or new privileges, a tmpfs /tmp, the granted roots and the scratch dir
// as volumes.
//
// Limits, kill-all and the counters come from the execution's cgroup lease, as on the
// gvisor tier: the engine is told to make the container's cgroups below the lease's
// (`--cgroup-parent`, with podman's cgroupfs manager), so the lease's memory, pids and
// cpu limits hold for the container, its OOM and pids verdicts and usage are the
// container's, and its kill-all reaches every process of it. The CLI and conmon stay
// outside: their own tasks and memory are not the program's.
//
// The engine owns the container (under conmon or a daemon), so killing the CLI is not
// enough: the exec helper runs `<engine> rm -f <name>` once the CLI's tree is gone, on
// every path, and removes the private dir that held the environment file.
#pragma once

#include <atomic>

#include "tiers/external/external_tiers.hpp"
#include "tiers/kernel_features.hpp"

namespace corral {

class container_tier : public external_tier {
public:
  container_tier(const profile& prof, const kernel_features& features, std::chrono::milliseconds deadline);
  // This machine's kernel features, detected here (tests).
  container_tier(const profile& prof, std::chrono::milliseconds deadline);
  tier_capabilities capabilities() const override;
  bool needs_cgroup_lease() const override { return true; }
  bool nests_cgroups() const override { return true; }
  expected<launch_plan> plan(const launch_request& request, const lease_grant& grant) const override;

  static constexpr const char* kWorkDir = "/work";
  // The per-execution env file, beside (never inside) the scratch dir.
  static std::string private_dir(const std::string& scratch_dir);
  // The engine CLI's argv up to `run` (the binary, a --runtime when configured, and for
  // podman the cgroupfs manager that takes a cgroup parent as a path).
  std::vector<std::string> engine_prefix(const std::string& bin) const;
  // `<engine> run` with the tier's boundary flags, then `extra` (a --name), the image and
  // `program`: the container the preflight tries, and what a benchmark times the tier
  // against (the same flags, without corral around them).
  std::vector<std::string> bare_run_argv(const std::string& bin, const std::vector<std::string>& extra,
                                         const std::vector<std::string>& program) const;

protected:
  tier_status preflight(std::chrono::milliseconds deadline) const override;

private:
  // What only the engine shows: `info`, then a trial container with the tier's flags.
  tier_status trial(const std::string& bin, std::chrono::milliseconds deadline) const;
  // Flags every container gets, the trial one included: what the tier promises.
  std::vector<std::string> boundary_flags() const;
  bool is_docker() const;

  container_settings settings_;
  std::vector<root_grant> source_roots_;
  std::vector<root_grant> output_roots_;
  network_mode network_;
  kernel_features features_;
};

} // namespace corral
