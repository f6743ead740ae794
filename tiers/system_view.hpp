// The host files a sandboxed program may see read-only: the system directories its
// interpreters and compilers need and the /etc essentials, and nothing else of the host's
// but the profile's granted roots. Shared by the tiers that build a view of the host (the
// landlock jail, the gvisor sandbox) so both show the same thing.
#pragma once

#include <string>
#include <vector>

#include "config/profile.hpp"

namespace corral {

// On merged-/usr systems /bin, /sbin and /lib* are symlinks; a bind of them shows the
// directory they point to.
const std::vector<std::string>& system_dirs();

// The rest of /etc (shadow, ssh keys, the host's config) stays out.
const std::vector<std::string>& etc_essentials();

bool path_exists(const std::string& path);  // lstat: a dangling symlink exists
bool is_under(const std::string& path, const std::string& dir);

// Where a host path appears inside such a view, or empty when the view does not show it.
std::string visible_in_view(const std::string& host_path, const std::vector<root_grant>& source_roots,
                            const std::vector<root_grant>& output_roots);

// The entries of `search_path` (the caller's PATH) that the view shows at the same place.
std::string visible_search_path(const std::string& search_path, const std::vector<root_grant>& source_roots,
                                const std::vector<root_grant>& output_roots);

} // namespace corral
