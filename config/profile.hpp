// The frozen profile: what the operator allows, loaded once from corral.toml (or the
// defaults) and never changed while the runtime runs. Requests can only tighten it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/language.hpp"
#include "config/limits.hpp"

namespace corral {

// A host directory exposed inside the boundary at `virtual_path`.
struct root_grant {
  std::string host_path;     // canonical, symlinks resolved
  std::string virtual_path;  // where the child sees it
  bool writable = false;     // source roots are read-only; output roots writable
};

// What happens when a request asks for more than the profile allows.
enum class widen_policy { refuse, clamp };

enum class network_mode { none, host };

struct landlock_settings {
  unsigned abi_floor = 1;      // refuse kernels below this Landlock ABI
  bool seccomp_kill = false;   // denied syscalls: EPERM (false) or kill the process
};

struct profile {
  std::string tier = "landlock";
  limits limit;
  widen_policy on_widen = widen_policy::refuse;
  std::map<std::string, std::string> env;  // the policy's environment (request overrides)
  std::vector<root_grant> source_roots;
  std::vector<root_grant> output_roots;
  std::vector<std::string> protected_paths;  // never exposed, nor any parent or child
  network_mode network = network_mode::none;
  landlock_settings landlock;
  language_table languages = language_table::builtin();
  std::string config_path;  // where it was loaded from; empty: defaults
};

} // namespace corral
