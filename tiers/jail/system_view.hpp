// The host files a sandboxed program may see read-only: the system directories its
// interpreters and compilers need and the /etc essentials, and nothing else of the host's
// but the profile's granted roots. Shared by the tiers that build a view of the host (the
// landlock jail, the gvisor sandbox) so both show the same thing.
#pragma once

#include <map>
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

// The environment a jailed program gets where neither the profile nor the request set a
// variable: PATH (the caller's PATH entries the view shows, then the view's standard
// dirs), HOME and TMPDIR (the jail's private /tmp, writable and empty at each start),
// LANG=C.UTF-8. `visible_caller_path` is visible_search_path's answer.
std::map<std::string, std::string> jail_default_environment(const std::string& visible_caller_path);

// `env` with jail_default_environment's variables added where it has none.
std::map<std::string, std::string> with_jail_defaults(std::map<std::string, std::string> env,
                                                      const std::string& visible_caller_path);

} // namespace corral
