// The operator's grants for one invocation (the CLI's --ro, --rw, --here, --env, --net and
// --cwd): added to the loaded profile before it is frozen, and checked exactly as the
// TOML's roots are (config/root_layout.hpp, config/protected_paths.hpp), so `describe`
// shows them and its digest covers them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/failure.hpp"
#include "config/profile.hpp"

namespace corral {

// --here: the caller's working directory at the same path inside, where programs start.
enum class here_mode { none, writable, read_only };

struct boundary_grants {
  std::vector<std::string> read_only;  // HOST[:INSIDE]; INSIDE defaults to HOST made absolute
  std::vector<std::string> writable;
  std::map<std::string, std::string> env;  // values resolved by the caller (--env KEY copies)
  std::optional<network_mode> network;
  std::string working_dir;  // an inside path; empty: --here's directory, else the scratch dir
  here_mode here = here_mode::none;

  // True when a grant shapes the boundary itself (roots, network, working dir), which only
  // an in-process runtime can do; the environment also travels in a daemon request.
  bool shapes_boundary() const;
};

// Adds `grants` to `p`: relative host paths resolve against `caller_cwd`, which is also
// --here's directory; the caller's .git there is protected (masked) when it exists.
status apply_grants(profile& p, const boundary_grants& grants, const std::string& caller_cwd);

} // namespace corral
