// What corral-microvm is told on its command line: the VM to build (VMM, kernel,
// initramfs, RAM, vCPUs), the outside deadline, and the guest request but its environment:
// that is the launcher's own environment (readable by its owner only, where a command
// line is readable by every user, and an environment may hold secrets). The microvm tier
// writes it with to_launcher_args, the launcher reads it with parse_vm_options; one file
// holds both directions so they cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/failure.hpp"
#include "tiers/microvm/guest_protocol.hpp"

namespace corral {

// A host directory the guest gets a copy of (guest_tree), and for a writable one, where
// what the program leaves there comes back to.
struct host_tree {
  std::string host;   // absolute
  std::string guest;  // absolute in the guest
  bool writable = false;
};

struct vm_options {
  std::string vmm;     // qemu-system-x86_64, absolute
  std::string kernel;  // an uncompressed vmlinux with a PVH entry point
  std::string initrd;  // the cpio with the agent as /init
  std::uint64_t vm_memory_mib = 256;
  std::uint32_t vcpus = 1;
  std::uint64_t timeout_ms = 0;  // the whole VM's life, boot included; 0: none
  std::vector<host_tree> trees;  // request.trees, in the same order
  guest_request request;
};

std::vector<std::string> to_launcher_args(const vm_options& options);
expected<vm_options> parse_vm_options(const std::vector<std::string>& args);

// The VMM's argv: QEMU's microvm machine, KVM, no NIC or any other device but the serial
// port carrying the agent channel on QEMU's stdin/stdout.
std::vector<std::string> vmm_argv(const vm_options& options);

// The guest's view of `trees` (request.trees) and their contents: directories, regular
// files and symlinks, parents before children, within kMaxTreeEntries and kMaxTreeBytes.
// Other kinds (sockets, devices) are left out; a tree over the bounds is refused.
status read_trees(const std::vector<host_tree>& trees, guest_request& request);

// Guest RAM for a program memory limit: the limit plus what the guest kernel and agent
// need themselves, plus the initramfs (`image_bytes`), which stays in RAM as the guest's
// root filesystem; never below a floor the kernel boots in.
std::uint64_t vm_memory_for(std::uint64_t program_memory_bytes, std::uint64_t image_bytes = 0);

} // namespace corral
