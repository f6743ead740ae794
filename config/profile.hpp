// The frozen profile: what the operator allows, loaded once from corral.toml (or the
// defaults) and never changed while the runtime runs. Requests can only tighten it.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "config/egress_decision.hpp"
#include "config/language.hpp"
#include "config/limits.hpp"
#include "config/mcp_policy.hpp"
#include "config/workspace_settings.hpp"

namespace corral {

// A host directory exposed inside the boundary at `virtual_path`.
struct root_grant {
  std::string host_path;     // canonical, symlinks resolved
  std::string virtual_path;  // where the child sees it
  bool writable = false;     // source roots are read-only; output roots writable
};

// A protected path inside a granted root, covered in the view rather than refused
// (config/protected_paths.hpp): .git stays readable but read-only, as codex keeps it; the
// config file, sandbox.protected_paths entries and the runtime's state dir are hidden
// (an empty read-only file or directory over them).
enum class mask_kind { read_only, hidden };

struct path_mask {
  std::string host_path;     // resolved
  std::string virtual_path;  // where its root shows it
  mask_kind kind = mask_kind::hidden;
  std::string what;          // "a .git directory", "the config file", ...
};

// What happens when a request asks for more than the profile allows.
enum class widen_policy { refuse, clamp };

// none: an empty network namespace; allowlist: that namespace plus the egress proxy as its
// only door (config/egress_decision.hpp); host: the host's network.
enum class network_mode { none, allowlist, host };

struct landlock_settings {
  unsigned abi_floor = 1;      // refuse kernels below this Landlock ABI
  bool seccomp_kill = false;   // denied syscalls: EPERM (false) or kill the process
};

// Per-tier settings from [sandbox.gvisor], [sandbox.container] and [sandbox.microvm].
// Empty strings mean "not configured"; the tier's preflight says what is missing.
struct gvisor_settings {
  std::string runsc = "runsc";  // looked up on PATH unless it contains a slash
  std::string platform;         // runsc --platform; empty: runsc's own default
};

struct container_settings {
  std::string engine = "podman";  // "podman", "docker" or an absolute path to either CLI
  std::string image;              // the image executions run in
  std::string runtime;            // the engine's --runtime (e.g. "runc"); empty: its default
};

struct microvm_settings {
  std::string kernel;              // absolute path to the guest kernel image
  std::string rootfs;              // absolute path to the guest root filesystem image
  std::string vmm = "qemu-system-x86_64"; // the VMM binary, on PATH unless it contains a slash
  std::string launcher;  // corral-microvm; empty: beside the program, then installed (not a TOML key)
  // The KVM device the preflight requires (not a TOML key): tests whose stand-in VMM runs
  // the agent on the host point it at a file, so they run on machines without KVM too.
  std::string kvm_device = "/dev/kvm";
  // The bound on the preflight's test boot (not a TOML key); 0: the registry's deadline.
  // Tests that boot the guest under QEMU's TCG need far longer than KVM does.
  std::chrono::milliseconds boot_deadline{0};
};

struct profile {
  std::string tier = "landlock";
  limits limit;
  widen_policy on_widen = widen_policy::refuse;
  std::map<std::string, std::string> env;  // the policy's environment (request overrides)
  std::vector<root_grant> source_roots;
  std::vector<root_grant> output_roots;
  std::vector<std::string> protected_paths;  // never exposed: masked inside a root, refused as one
  std::vector<path_mask> masks;              // computed from the roots and the protected paths
  // Where programs start, inside the view (--cwd, --here); empty: the scratch dir.
  std::string working_dir;
  network_mode network = network_mode::none;
  egress_lists egress;  // [sandbox.network] allow/deny, used in allowlist mode
  landlock_settings landlock;
  gvisor_settings gvisor;
  container_settings container;
  microvm_settings microvm;
  workspace_settings workspaces;  // [sandbox.workspaces]
  language_table languages = language_table::builtin();
  mcp_policy mcp;  // [mcp]: the gateway's policy for stdio sessions (transparent when empty)
  std::string config_path;  // where it was loaded from; empty: defaults
};

} // namespace corral
