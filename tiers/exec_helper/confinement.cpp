#include "tiers/exec_helper/confinement.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tiers/exec_helper/seccomp_filter.hpp"
#include "tiers/exec_helper/status_writer.hpp"

namespace corral::helper {

int step_error(const char* step, const std::string& what) {
  int err = errno ? errno : EINVAL;
  report_failed(err, step, what + ": " + std::strerror(err));
  return err;
}

int apply_rlimits(const jail_spec& spec) {
  for (auto& r : spec.rlimits) {
    rlimit lim{static_cast<rlim_t>(r.soft), static_cast<rlim_t>(r.hard)};
    if (::setrlimit(static_cast<__rlimit_resource>(r.resource), &lim) < 0)
      return step_error("rlimits", "setrlimit " + std::to_string(r.resource));
  }
  return 0;
}

// Everything but stdio and the (close-on-exec) status channel: the runtime closed what it
// could before the helper started; this covers anything a spawn path missed.
int close_inherited_fds() { return close_inherited_fds_but(-1); }

int close_inherited_fds_but(int keep) {
  unsigned first = kStatusFd + 1;
  if (keep >= static_cast<int>(first)) {
    if (keep > static_cast<int>(first) && ::syscall(SYS_close_range, first, keep - 1, 0) < 0)
      return step_error("fds", "close_range");
    first = static_cast<unsigned>(keep) + 1;
  }
  if (::syscall(SYS_close_range, first, ~0u, 0) < 0) return step_error("fds", "close_range");
  return 0;
}

namespace {

int drop_privileges(const jail_spec& spec) {
  // The bounding set first: dropping from it needs CAP_SETPCAP, which the uid change below
  // takes away. A kernel that knows fewer capabilities than CAP_LAST_CAP answers EINVAL.
  for (int cap = 0; cap <= CAP_LAST_CAP; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
      return step_error("credentials", "drop capability " + std::to_string(cap) + " from the bounding set");
  if (::setresgid(spec.gid_inside, spec.gid_inside, spec.gid_inside) < 0)
    return step_error("credentials", "setresgid");
  if (::setresuid(spec.uid_inside, spec.uid_inside, spec.uid_inside) < 0)
    return step_error("credentials", "setresuid");
  // The uid change alone may keep capabilities (uid 0 of the namespace need not be mapped),
  // so clear the ambient and effective/permitted/inheritable sets explicitly.
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capset, &header, data) < 0) return step_error("credentials", "capset");
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return step_error("no_new_privs", "prctl");
  return 0;
}

} // namespace

// The last set-up step: nobody, no capabilities, no_new_privs, the Landlock domain, then
// the seccomp filter. The credential change clears the parent-death signal, so it is set
// again (should the helper die in between, the lease still ends this process); it stays
// non-dumpable, so the program, running as the same uid, cannot open its /proc files
// (mem, environ, fds) to reach its status fd.

int confine_process(const jail_spec& spec, prepared_ruleset& ruleset) {
  if (int err = drop_privileges(spec)) return err;
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) return step_error("credentials", "prctl PDEATHSIG");
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) return step_error("credentials", "prctl DUMPABLE");
  if (int err = restrict_self(ruleset)) return err;
  return install_seccomp_filter(spec);
}

int limit_and_confine(const jail_spec& spec) {
  auto t = std::chrono::steady_clock::now();
  if (int err = apply_rlimits(spec)) return err;
  if (int err = close_inherited_fds()) return err;
  report_step("limits", t);

  t = std::chrono::steady_clock::now();
  prepared_ruleset ruleset;
  if (int err = prepare_landlock(spec, ruleset)) return err;
  report_step("landlock", t);

  t = std::chrono::steady_clock::now();
  if (int err = confine_process(spec, ruleset)) return err;
  report_step("confine", t);
  return 0;
}

} // namespace corral::helper
