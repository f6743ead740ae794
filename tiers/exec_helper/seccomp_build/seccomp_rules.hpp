// The seccomp filter's rules, compiled to BPF when corral is built (generate.cpp), so
// neither the helper nor the runtime runs libseccomp: the helper loads a program that is
// already a constant (tiers/exec_helper/seccomp_filter.hpp). What the filter denies:
// default allow, with a deny list of the calls that widen the kernel's attack surface or
// undo the jail: namespaces and mounts, tracing other processes, kernel keyrings, modules
// and kexec, io_uring and bpf, perf, userfaultfd, personality changes, terminal input
// injection (TIOCSTI, TIOCLINUX) and socket families other than unix, inet, inet6 and
// netlink. Denied calls fail with EPERM, or kill the process (the spec's seccomp_kill).
// Foreign architectures (i386, x32) kill: their syscall numbers would bypass every rule.
#pragma once

#include <string>
#include <vector>

#include <linux/filter.h>

namespace corral::seccomp_build {

// The BPF program libseccomp makes of the rules; empty with `error` set when it cannot.
std::vector<sock_filter> compile_filter(bool kill, std::string& error);

} // namespace corral::seccomp_build
