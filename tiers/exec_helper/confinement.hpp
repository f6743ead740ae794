// What a jail's init and a step entering a workspace both do to themselves before their
// program starts, in this order: rlimits, close inherited fds, then `confine_process`
// (nobody, no capabilities, parent-death signal, not dumpable, no_new_privs, the Landlock
// domain, the seccomp filter). Each reports the step that failed on the status channel.
#pragma once

#include <string>

#include "tiers/exec_helper/landlock_ruleset.hpp"
#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// Reports `step` as failed with errno's text after `what`; returns the errno.
int step_error(const char* step, const std::string& what);

int apply_rlimits(const jail_spec& spec);
// Everything but stdio and the (close-on-exec) status channel.
int close_inherited_fds();
// The same, keeping `keep` (a descriptor the target still needs before its exec; -1: none).
int close_inherited_fds_but(int keep);
int confine_process(const jail_spec& spec, prepared_ruleset& ruleset);

// The whole sequence above, each part reported as a step (`limits`, `landlock`, `confine`):
// what follows runs with the credentials, Landlock domain and seccomp filter its program
// will have.
int limit_and_confine(const jail_spec& spec);

} // namespace corral::helper
