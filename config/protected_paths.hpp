// Paths a root may never expose: the config file, .git directories, the runtime's state
// directory and whatever the operator lists in sandbox.protected_paths. A protected path
// inside a granted root is masked in the view rather than refused (profile.hpp's
// mask_kind): a .git stays readable but read-only; the others are hidden under an empty
// read-only file or directory. Paths are compared after resolving symlinks on both sides
// (a symlinked root is judged by where it leads).
//
// Refused, because no mask can hold there:
//   - a root that equals or lies inside a protected path (the mask would be the whole root);
//   - a writable root holding an operator-listed path that does not exist (a mount needs
//     something to cover, and the program could create the path).
// Not found, so not masked: a .git deeper than the scan bounds below, and a .git created
// after the profile was loaded.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "config/failure.hpp"
#include "config/profile.hpp"

namespace corral {

// .git directories below a root are searched this deep, visiting at most this many
// entries, so a root such as /usr cannot stall loading.
inline constexpr int kGitScanDepth = 6;
inline constexpr std::size_t kGitScanEntries = 50'000;

// Adds to p.masks every protected path inside a root: p.config_path, p.protected_paths,
// `extra_protected` (the runtime passes its state directory; the loader the project's .git,
// which is protected only when it exists), and every .git at or above a root or inside it.
// Masks already there stay, so the loader, the grant flags and the runtime can each add
// theirs. A config_error names the root, the protected path and why no mask can hold.
status mask_protected(profile& p, const std::vector<std::string>& extra_protected);

// `path` made absolute with symlinks resolved as far as it exists and the rest normalised
// lexically, without a trailing slash: the form in which paths are compared.
std::string resolve_for_comparison(const std::string& path);

} // namespace corral
