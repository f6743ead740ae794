// The landlock tier: the default boundary on Linux. The exec helper builds it in jail
// mode (tiers/exec_helper/jail_launcher.hpp): new user, pid, mount, network, ipc, uts and
// cgroup namespaces; a minimal filesystem view; the lease's cgroup; rlimits;
// no_new_privs; a Landlock ruleset; seccomp last. This class decides the view and the
// rules from the frozen profile, and says whether this kernel can hold all of it.
#pragma once

#include <cstdint>
#include <map>

#include "tiers/kernel_features.hpp"
#include "tiers/tier.hpp"

namespace corral {

// Who a root runtime's jail runs as, outside and in: nobody. Its files are this user's.
inline constexpr std::uint32_t kLandlockJailUser = 65534;

class landlock_tier : public tier {
public:
  landlock_tier(const profile& prof, const kernel_features& features);
  std::string name() const override { return "landlock"; }
  tier_status available() const override;
  tier_capabilities capabilities() const override;
  bool needs_cgroup_lease() const override { return true; }
  // Allowlist executions start cold: a warm jail would need its proxy listeners handed to
  // whichever execution takes it (see README, Network).
  bool supports_warm_jails() const override { return network_ != network_mode::allowlist; }
  bool enforces_network_allowlist() const override { return true; }
  bool helper_exits_with_program() const override { return true; }
  bool builds_masked_view() const override { return true; }
  expected<launch_plan> plan(const launch_request& request, const lease_grant& grant) const override;

  // Allowlist mode: where the HTTP and the SOCKS5 proxy listen on the jail's own loopback
  // (its network namespace is its own, so fixed ports never collide).
  static constexpr std::uint16_t kHttpProxyPort = 3128;
  static constexpr std::uint16_t kSocksProxyPort = 1080;
  // Where the per-execution scratch dir appears inside the jail (the working directory).
  static constexpr const char* kWorkDir = "/work";

private:
  // The host path's location inside the view, or empty when the view does not show it.
  std::string visible_path(const std::string& host_path) const;

  std::vector<root_grant> source_roots_;
  std::vector<root_grant> output_roots_;
  std::vector<path_mask> masks_;
  // Each writable root's host path -> why it cannot be idmapped here (empty: it can),
  // probed once when the tier is built (tiers/jail/idmapped_mount.hpp).
  std::map<std::string, std::string> idmap_problems_;
  std::string working_dir_;  // empty: kWorkDir
  network_mode network_;
  landlock_settings settings_;
  kernel_features features_;
};

// `env` with the variables that send HTTP(S) and SOCKS clients to the egress proxies at
// 127.0.0.1:kHttpProxyPort and :kSocksProxyPort (allowlist network mode).
std::map<std::string, std::string> with_egress_proxy_env(std::map<std::string, std::string> env);

} // namespace corral
