// The seccomp filter's rules, compiled to BPF when corral is built (generate.cpp), so
// neither the helper nor the runtime runs libseccomp: the helper loads a program that is
// already a constant (tiers/exec_helper/seccomp_filter.hpp). What the filter denies:
// default allow, with a deny list of the calls that widen the kernel's attack surface or
// undo the jail: namespaces and mounts, tracing other processes, kernel keyrings, modules
// and kexec, io_uring and bpf, perf, userfaultfd, personality changes, terminal input
// injection (TIOCSTI, TIOCLINUX) and socket families other than unix, inet, inet6 and
// netlink. Denied calls fail with EPERM, or kill the process (the spec's seccomp_kill).
// Foreign architectures (i386, x32) kill: their syscall numbers would bypass every rule.
//
// The contained tier (no namespaces: the host's sockets and network are the program's)
// adds, per jail_spec's seccomp_variant: no new unix or netlink socket (socketpair stays:
// pipes between the program's own processes); with the network closed, no inet socket and
// no listen; brokered (the egress allow-list), no inet socket but TCP (Landlock ABI 4-7
// governs TCP only, so UDP, raw, SCTP and MPTCP would pass it), no listen, no TCP Fast
// Open send (a connect made inside sendto/sendmsg), and every connect handed to the helper
// (SECCOMP_RET_USER_NOTIF: tiers/exec_helper/connect_broker.hpp).
#pragma once

#include <string>
#include <vector>

#include <linux/filter.h>

#include "tiers/jail/jail_spec.hpp"

namespace corral::seccomp_build {

// The BPF program libseccomp makes of the rules; empty with `error` set when it cannot.
std::vector<sock_filter> compile_filter(bool kill, seccomp_variant variant, std::string& error);

// The generated constant's name for a variant and deny action ("kSeccompContainedClosedKill").
std::string program_name(bool kill, seccomp_variant variant);

} // namespace corral::seccomp_build
