// The seccomp filter, loaded last before execve. Its rules (what it denies, and why) are in
// tiers/exec_helper/seccomp_build/seccomp_rules.hpp; libseccomp compiles them to BPF when
// corral is built, so the helper only hands a constant program to the kernel (compiling it
// here cost 1-2 ms of every cold start).
#pragma once

#include <linux/filter.h>

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

// The compiled programs, one per seccomp_variant and deny action (generated:
// seccomp_programs.cpp in the build).
extern const sock_filter kSeccompErrno[];
extern const unsigned short kSeccompErrnoLength;
extern const sock_filter kSeccompKill[];
extern const unsigned short kSeccompKillLength;
extern const sock_filter kSeccompContainedOpenErrno[];
extern const unsigned short kSeccompContainedOpenErrnoLength;
extern const sock_filter kSeccompContainedOpenKill[];
extern const unsigned short kSeccompContainedOpenKillLength;
extern const sock_filter kSeccompContainedClosedErrno[];
extern const unsigned short kSeccompContainedClosedErrnoLength;
extern const sock_filter kSeccompContainedClosedKill[];
extern const unsigned short kSeccompContainedClosedKillLength;
extern const sock_filter kSeccompContainedBrokeredErrno[];
extern const unsigned short kSeccompContainedBrokeredErrnoLength;
extern const sock_filter kSeccompContainedBrokeredKill[];
extern const unsigned short kSeccompContainedBrokeredKillLength;

// The program for a variant and deny action (inline: the unit tests link the programs
// without the helper).
inline sock_fprog seccomp_program(seccomp_variant variant, bool kill) {
  auto pick = [&](const sock_filter* errno_program, unsigned short errno_length, const sock_filter* kill_program,
                  unsigned short kill_length) {
    return kill ? sock_fprog{kill_length, const_cast<sock_filter*>(kill_program)}
                : sock_fprog{errno_length, const_cast<sock_filter*>(errno_program)};
  };
  switch (variant) {
    case seccomp_variant::contained_open:
      return pick(kSeccompContainedOpenErrno, kSeccompContainedOpenErrnoLength, kSeccompContainedOpenKill,
                  kSeccompContainedOpenKillLength);
    case seccomp_variant::contained_closed:
      return pick(kSeccompContainedClosedErrno, kSeccompContainedClosedErrnoLength, kSeccompContainedClosedKill,
                  kSeccompContainedClosedKillLength);
    case seccomp_variant::contained_brokered:
      return pick(kSeccompContainedBrokeredErrno, kSeccompContainedBrokeredErrnoLength,
                  kSeccompContainedBrokeredKill, kSeccompContainedBrokeredKillLength);
    case seccomp_variant::jail:
      break;
  }
  return pick(kSeccompErrno, kSeccompErrnoLength, kSeccompKill, kSeccompKillLength);
}

// In the target, as the last step before execve (no_new_privs is already set): the
// program for the spec's variant and deny action. With `listener` set (the brokered
// variant), the filter's notification fd is stored there (close-on-exec).
int install_seccomp_filter(const jail_spec& spec, int* listener = nullptr);

} // namespace corral::helper
