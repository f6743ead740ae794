// A caller's path in a workspace's files API, mapped to a path relative to the workspace
// root. Purely lexical: it never looks at the disk; workspace_tree resolves the result
// beneath the root with openat2, which is what stops symlinks.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "config/failure.hpp"

namespace corral {

inline constexpr std::size_t max_workspace_path_bytes = 4096;
inline constexpr std::size_t max_workspace_path_components = 64;

// `/work/a/b` (mount_at `/work`) → `a/b`; `/work` → `.`; `a//./b/` → `a/b`.
// Refused (failure_kind::refused): `..` anywhere (never resolved: a `..` after a symlink
// means something else on disk than on paper), an absolute path outside mount_at.
// Invalid (failure_kind::invalid_request): empty, NUL, longer than 4096 bytes, more than
// 64 components, a mount_at that is not a plain absolute path.
expected<std::string> workspace_relative_path(std::string_view requested, std::string_view mount_at);

} // namespace corral
