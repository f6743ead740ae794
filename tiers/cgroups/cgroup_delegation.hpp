// A cgroup v2 subtree delegated to a user who is not root (systemd's Delegate=yes: a
// `systemd-run --user --scope -p Delegate=yes` scope, or a unit with Delegate=yes and a
// User=): the cgroup corral itself runs in, whose control files are this user's to write.
// Executions then go below it as they go below the v2 mount's root for root.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>

#include "config/failure.hpp"
#include "tiers/cgroups/cgroup_mounts.hpp"

namespace corral {

// The leaf corral moves itself into (see enter_runtime_leaf): a name no lease dir has.
extern const char* const kRuntimeLeaf;

// The directory of the cgroup this process runs in below the v2 mount `m`, from the text of
// /proc/self/cgroup ("0::/user.slice/.../corral.scope"); nullopt when the text names no v2
// cgroup or names one outside what `m` shows (a mount of another subtree).
std::optional<std::string> own_v2_cgroup(const cgroup_mount& m, const std::string& proc_self_cgroup);

// Whether this user may make child cgroups in `dir`, move processes into it and enable
// controllers for its children: what a delegated subtree grants (cgroup.procs,
// cgroup.subtree_control and the dir itself writable).
bool cgroup_writable(const std::string& dir);

// cgroup v2 puts no process in a cgroup whose children have controllers enabled, and the
// delegated cgroup holds corral itself: this moves `self` into `<dir>/corral-runtime`, so
// `dir` may enable memory, pids and cpu for the executions' cgroups. Other processes in
// `dir` are not corral's to move (they may belong to a shell the user started the scope
// with): they are a refusal that names them and how to start corral in a scope of its own.
status enter_runtime_leaf(const std::string& dir, pid_t self);

} // namespace corral
