// The agent's channel in the guest: a virtio-serial port named "corral", which QEMU
// connects to the launcher's pipes. The serial port (ttyS0) carried the channel before;
// it costs a VM exit per byte (a megabyte of output took seconds), so it is now only the
// console where the kernel and the agent report a boot that went wrong.
//
// Debian's kernel builds the virtio drivers as modules, so the image carries them
// (scripts/build-microvm-image) and the agent loads them itself: there is no modprobe.
#pragma once

#include <chrono>
#include <string>

#include "config/failure.hpp"
#include "tiers/microvm/guest_protocol.hpp"

namespace corral::microvm_guest {

// Where the image puts the modules, and the file listing them in load order.
inline constexpr const char* kModuleDir = "/lib/corral-modules";

// Loads every module `order` names (one file name per line, in kModuleDir), in order; one
// the kernel already has is fine. Then waits up to `bound` for the port named kChannelPortName
// and opens it read-write: the descriptor, or what is missing.
expected<int> open_channel(std::chrono::milliseconds bound);

} // namespace corral::microvm_guest
