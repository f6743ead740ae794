// Paths a root may never expose: the config file, .git directories, the runtime's state
// directory and whatever the operator lists in sandbox.protected_paths. A root exposes a
// path when its host path equals it, contains it or lies inside it, compared after
// resolving symlinks on both sides (a symlinked root is judged by where it leads).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "config/failure.hpp"
#include "config/profile.hpp"

namespace corral {

// .git directories below a root are searched this deep, visiting at most this many
// entries, so a root such as /usr cannot stall loading. Deeper ones are not found here;
// a tier that mounts a root should not rely on this check alone for nested repositories.
inline constexpr int kGitScanDepth = 6;
inline constexpr std::size_t kGitScanEntries = 50'000;

// Protected: p.config_path, every path in p.protected_paths and in `extra_protected` (the
// runtime passes its state directory; the loader the project's .git), and every .git
// directory at or above each root's host path or inside it. A root that overlaps one is
// a config_error naming both.
status check_protected(const profile& p, const std::vector<std::string>& extra_protected);

// `path` made absolute with symlinks resolved as far as it exists and the rest normalised
// lexically, without a trailing slash: the form in which paths are compared.
std::string resolve_for_comparison(const std::string& path);

} // namespace corral
