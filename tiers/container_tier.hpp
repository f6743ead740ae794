// The container tier: each execution is one `<engine> run --rm` (podman or docker CLI) of
// the configured image, with no network, a read-only root, uid 65534 without
// capabilities or new privileges, a tmpfs /tmp, the granted roots and the scratch dir
// as volumes, and the engine's own memory, pids and cpu limits.
//
// The engine owns the container's processes (under conmon or a daemon, in its own
// cgroups), so killing the CLI is not enough: the exec helper runs `<engine> rm -f
// <name>` once the CLI's tree is gone, on every path, and removes the private dir that
// held the environment file.
#pragma once

#include <atomic>

#include "tiers/external_tiers.hpp"

namespace corral {

class container_tier : public external_tier {
public:
  container_tier(const profile& prof, std::chrono::milliseconds deadline);
  tier_capabilities capabilities() const override;
  expected<launch_plan> plan(const launch_request& request, const lease_grant& grant) const override;

  static constexpr const char* kWorkDir = "/work";
  // The per-execution env file, beside (never inside) the scratch dir.
  static std::string private_dir(const std::string& scratch_dir);
  // The engine CLI's argv up to `run` (the binary and a --runtime when configured).
  std::vector<std::string> engine_prefix(const std::string& bin) const;

protected:
  tier_status preflight(std::chrono::milliseconds deadline) const override;

private:
  // Flags every container gets, the trial one included: what the tier promises.
  std::vector<std::string> boundary_flags() const;

  container_settings settings_;
  std::vector<root_grant> source_roots_;
  std::vector<root_grant> output_roots_;
  network_mode network_;
};

} // namespace corral
