// corral.toml -> the frozen profile. Strict on purpose: an operator's typo must not
// silently widen the boundary, so every unknown key (at any depth), wrong type, malformed
// size and non-positive or non-finite limit is a config_error naming the dotted key and
// its file:line:column.
//
// Schema (everything optional; relative paths resolve against the config file's directory):
//   [sandbox]
//     tier            string   landlock (default) | host | gvisor | container | microvm | e2b,
//                              or tier0=host, tier1=container, tier2=gvisor, tier3=microvm
//     network         string   "none" (default) | "host"; or the table below
//   [sandbox.network]
//     mode            string   "none" (default) | "allowlist" | "host"
//     allow, deny     arrays   "name", "*.suffix", "1.2.3.4", "10.0.0.0/8", "[fc00::/7]", each
//                              with an optional ":port" (allow default 80 and 443, deny every
//                              port); only with mode = "allowlist", which needs allow entries
//     on_widen        string   "refuse" (default) | "clamp"
//     env             table    NAME = "value"; NAME non-empty, without '=' or NUL
//     protected_paths array    of paths no root may equal, contain or lie inside
//   [sandbox.roots]
//     source_roots    array    "host:virtual[:ro]"  read-only; ":rw" is an error
//     output_roots    array    "host:virtual[:rw]"  writable;  ":ro" is an error
//                              host: an existing directory (symlinks resolved); virtual:
//                              absolute, not "/", not under /proc, /dev or /sys, unique
//   [sandbox.limits]
//     memory, output_cap, stdin_cap   size: "512m", "2g", "64k" or a positive integer of bytes
//     cpu             number   positive, finite cores (at most 8192)
//     pids            integer  positive
//     timeout         number   positive, finite seconds (at least 1 ms, at most a year)
//     kill_grace      number   finite seconds >= 0 between SIGTERM and SIGKILL
//   [sandbox.landlock]   abi_floor (integer 1..255), deny_action ("errno" | "kill")
//   [sandbox.gvisor]     runsc (path or name on PATH), platform (string)
//   [sandbox.container]  engine ("podman" | "docker" | an absolute path), image (string)
//   [sandbox.microvm]    kernel, rootfs (paths), vmm (string)
//   [sandbox.e2b]        no keys yet
//   [sandbox.languages.NAME]  source_file (a file name), compile, run, env_allowlist
//                              (arrays of strings). Adds NAME, or overrides the given
//                              fields of a builtin; `run = []` disables a builtin.
#pragma once

#include <string>
#include <string_view>

#include "config/boundary_grants.hpp"
#include "config/failure.hpp"
#include "config/profile.hpp"

namespace corral {

// Reads `config_path`, or `<project_dir>/corral.toml` when it is empty. Only that default
// file may be missing (the defaults apply, config_path stays empty); an explicit path that
// is missing, a dangling symlink or not a regular file is an error. The file is read once:
// the profile is a value and later edits of the file do not reach it. The returned
// profile records the config file's canonical path and has passed check_protected with
// the project's .git protected.
expected<profile> load_profile(const std::string& config_path, const std::string& project_dir);

// The same rules applied to `text` (tests, the fuzz target). `source_name` prefixes
// positions in messages; relative paths resolve against `project_dir`; config_path stays
// empty because no file backs the text.
expected<profile> load_profile_from_string(std::string_view text, std::string_view source_name,
                                           const std::string& project_dir);

// For a command: load_profile with the working directory as the project ("." when it
// cannot be read); with `grants`, the invocation's grants are added, relative to it too.
expected<profile> load_profile_here(const std::string& config_path);
expected<profile> load_profile_here(const std::string& config_path, const boundary_grants& grants);

} // namespace corral
