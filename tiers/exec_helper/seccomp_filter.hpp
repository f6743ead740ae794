// The seccomp filter, loaded last before execve. Its rules (what it denies, and why) are in
// tiers/exec_helper/seccomp_build/seccomp_rules.hpp; libseccomp compiles them to BPF when
// corral is built, so the helper only hands a constant program to the kernel (compiling it
// here cost 1-2 ms of every cold start).
#pragma once

#include <linux/filter.h>

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// The compiled programs, one per deny action (generated: seccomp_programs.cpp in the build).
extern const sock_filter kSeccompErrno[];
extern const unsigned short kSeccompErrnoLength;
extern const sock_filter kSeccompKill[];
extern const unsigned short kSeccompKillLength;

// In the target, as the last step before execve (no_new_privs is already set): the
// program for the spec's deny action.
int install_seccomp_filter(const jail_spec& spec);

} // namespace corral::helper
