// The per-execution scratch dir (the jail's /work, every tier's working directory): made
// here, bounded here, removed here.
//
// The bound is a tmpfs of the profile's scratch_size mounted on the dir, chosen over
// RLIMIT_FSIZE: RLIMIT_FSIZE bounds one file (a thousand smaller files pass, and it also
// bounds output roots and pipes), where a tmpfs bounds the sum and fails the write with
// ENOSPC. It also keeps a filler off the host's disk: tmpfs pages are memory, charged to the
// memory cgroup of the writer (the execution's), so the memory limit bounds them too. A
// tmpfs (rather than a mount inside the jail) because a compiled language's two steps run in
// two jails and share the dir, and the runtime writes the source file into it first.
// Mounting needs root in the initial namespaces; an unprivileged runtime gets a plain dir
// (results say `scratch_size` is not enforced).
#pragma once

#include <cstdint>
#include <string>
#include <system_error>

#include "config/failure.hpp"

namespace corral {

// True when make_scratch_dir bounds the dir with a tmpfs.
bool scratch_dir_bounded();

// mkdtemp(parent/corral-<id>-XXXXXX), mode 0700, then the tmpfs of `bytes` where allowed.
expected<std::string> make_scratch_dir(const std::string& parent, const std::string& id, std::uint64_t bytes);

// Unmounts its tmpfs (if any) and removes the dir and everything in it. Callers on an
// execution's way out ignore the error (a leftover is the start-up sweep's); the sweep
// reports it.
std::error_code remove_scratch_dir(const std::string& dir);

// Moves the entries of `from` into `to` (across two tmpfs: copied), then removes `from`.
status move_scratch_contents(const std::string& from, const std::string& to);

} // namespace corral
