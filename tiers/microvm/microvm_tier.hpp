// The microvm tier: every execution in its own throwaway VM (QEMU's microvm machine on
// KVM) booting Debian's kernel and our initramfs, whose /init is the guest agent
// (tiers/microvm/). The launch plan runs the host-side launcher corral-microvm through the
// exec helper in host mode: the launcher speaks to the agent over a virtio-serial port and
// gives the runtime ordinary stdout, stderr and an exit status, so collectors, timeout and
// result work as on every tier. The VM has no network device at all.
//
// Fails closed: without KVM, a VMM with the microvm machine, the guest image or the
// launcher, it is unavailable with what to do; nothing ever runs on the host instead.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>

#include "config/profile.hpp"
#include "tiers/tier.hpp"

namespace corral {

class microvm_tier : public tier {
public:
  // `launcher` empty: corral-microvm beside the running program, then the installed one.
  // `roots`: the profile's source and output roots, copied into each VM (the output roots
  // copied back afterwards).
  microvm_tier(microvm_settings settings, std::string launcher, std::chrono::milliseconds deadline,
               std::vector<root_grant> roots = {});
  std::string name() const override { return "microvm"; }
  // Checks KVM, the VMM, the image and the launcher, then boots the guest once to run
  // /bin/true; each probe is bounded by the deadline, and it all runs once.
  tier_status available() const override;
  tier_capabilities capabilities() const override;
  expected<launch_plan> plan(const launch_request& request, const lease_grant& grant) const override;

  // The guest's working directory: a copy of the scratch dir, copied back afterwards.
  static constexpr const char* kGuestWorkDir = "/work";

private:
  tier_status preflight() const;

  microvm_settings settings_;
  std::string launcher_;
  std::chrono::milliseconds deadline_;
  std::vector<root_grant> roots_;
  mutable std::once_flag once_;
  mutable tier_status status_;
  // What the preflight found, fixed once it has run.
  mutable std::string vmm_path_;
  mutable std::string launcher_path_;
  mutable std::uint64_t image_bytes_ = 0;  // the initramfs, resident in the guest's RAM
};

// corral-microvm beside the running program or installed; empty when neither exists.
std::string find_microvm_launcher();

} // namespace corral
