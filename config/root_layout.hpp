// Where a granted root may go: its host path (an existing file or directory, symlinks
// resolved; a writable one never a host system directory) and its inside path, checked
// against the jail's view when the profile is loaded, so `describe` and `run` agree:
//   - refused: "/", /proc, /dev, /sys (the boundary's kernel filesystems), /work and /tmp
//     themselves (the scratch dir and the private /tmp would be shadowed), the view's
//     system directories and anything below them (/usr, /bin, /sbin, /lib*, /etc: shown
//     read-only from the host, with no room for a mount point), and a second root at the
//     same inside path;
//   - supported: anything below /work or /tmp, and nested roots (/x and /x/y) where the
//     outer root's host directory already holds the inner mount point (the view never
//     creates directories in a host directory).
// The TOML loader and the grant flags both go through these functions: one set of rules.
#pragma once

#include <optional>
#include <string>

#include "config/failure.hpp"
#include "config/profile.hpp"

namespace corral {

// `host` absolute; `inside` as given. The reason is phrased to follow the entry it is about.
expected<root_grant> resolve_root(const std::string& host, const std::string& inside, bool writable);

// Whether `inside` may be a root's inside path: nullopt and the normalised path in
// `normalized`, or why not.
std::optional<std::string> inside_path_problem(const std::string& inside, std::string& normalized);

// The roots against each other: unique inside paths, and nested ones only where the mount
// point exists. Also checks p.working_dir. Call after every change to the roots.
status check_root_layout(const profile& p);

// True for inside paths that a root can only be placed below, never at (/work, /tmp).
bool is_scratch_place(const std::string& inside);

} // namespace corral
