// The seccomp filter, loaded last before execve. Default allow, with a deny list of the
// calls that widen the kernel's attack surface or undo the jail: namespaces and mounts,
// tracing other processes, kernel keyrings, modules and kexec, io_uring and bpf, perf,
// userfaultfd, personality changes, terminal input injection (TIOCSTI, TIOCLINUX) and
// socket families other than unix, inet, inet6 and netlink. Denied calls fail with EPERM,
// or kill the process when the spec says so. Foreign architectures (i386, x32) kill: their
// syscall numbers would bypass every rule.
#pragma once

#include <string>
#include <vector>

#include <linux/filter.h>

#include <seccomp.h>

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// Compiles the filter (allocates; call before the fork that leads to exec). Null on error,
// after reporting.
scmp_filter_ctx build_seccomp_filter(const jail_spec& spec);

// The filter as the kernel takes it: libseccomp's BPF generation (1-2 ms on a slow
// machine) is done once, before the fork, so a warm jail's request path has none of it.
struct compiled_filter {
  std::vector<sock_filter> program;
};

// Generates the BPF program of `filter` (then no longer needed). Nonzero errno on error,
// after reporting.
int compile_seccomp_filter(scmp_filter_ctx filter, compiled_filter& out);

// In the target, as the last step before execve (no_new_privs is already set).
int install_seccomp_filter(const compiled_filter& filter);

} // namespace corral::helper
