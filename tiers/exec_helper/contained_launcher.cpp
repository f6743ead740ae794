#include "tiers/exec_helper/contained_launcher.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <grp.h>
#include <linux/capability.h>
#include <optional>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tiers/exec_helper/confinement.hpp"
#include "tiers/exec_helper/connect_broker.hpp"
#include "tiers/exec_helper/egress_listeners.hpp"
#include "tiers/exec_helper/landlock_ruleset.hpp"
#include "tiers/exec_helper/seccomp_filter.hpp"
#include "tiers/exec_helper/status_writer.hpp"
#include "tiers/exec_helper/target_supervisor.hpp"

namespace corral::helper {

namespace {

using clock = std::chrono::steady_clock;

// The processes `uid` runs now (a /proc directory belongs to its process's effective uid;
// RLIMIT_NPROC counts by real uid, the same for everything but set-uid programs).
std::uint64_t processes_of(uid_t uid) {
  std::uint64_t n = 0;
  DIR* dir = ::opendir("/proc");
  if (!dir) return 0;
  while (auto* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    struct stat st {};
    if (::fstatat(::dirfd(dir), e->d_name, &st, 0) == 0 && st.st_uid == uid) ++n;
  }
  ::closedir(dir);
  return n;
}

// Ready before the clone: the target (sharing this memory until its exec) allocates nothing.
struct contained_start {
  const jail_spec* spec = nullptr;
  prepared_ruleset* ruleset = nullptr;
  connect_broker* broker = nullptr;
  rlimit nproc{};
  bool set_nproc = false;
  bool change_ids = false;
};

int drop_to_unprivileged(const contained_start& c) {
  const jail_spec& spec = *c.spec;
  // The bounding set needs CAP_SETPCAP to shrink: a root runtime has it; an unprivileged
  // one holds no capability to lose, and no_new_privs keeps file capabilities from adding
  // any at exec.
  for (int cap = 0; cap <= CAP_LAST_CAP; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL && errno != EPERM)
      return step_error("credentials", "drop a capability from the bounding set");
  if (c.change_ids) {
    gid_t none[1] = {static_cast<gid_t>(spec.gid_inside)};
    if (::setgroups(1, none) < 0) return step_error("credentials", "setgroups");
    if (::setresgid(spec.gid_inside, spec.gid_inside, spec.gid_inside) < 0) return step_error("credentials", "setresgid");
    if (::setresuid(spec.uid_inside, spec.uid_inside, spec.uid_inside) < 0) return step_error("credentials", "setresuid");
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capset, &header, data) < 0) return step_error("credentials", "capset");
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return step_error("no_new_privs", "prctl");
  // After the uid change, which clears it: the helper's death ends the program too.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) return step_error("credentials", "prctl PDEATHSIG");
  return 0;
}

int confine_target(const contained_start& c) {
  const jail_spec& spec = *c.spec;
  if (int err = apply_rlimits(spec)) return err;
  if (c.set_nproc && ::setrlimit(RLIMIT_NPROC, &c.nproc) < 0) return step_error("rlimits", "setrlimit RLIMIT_NPROC");
  if (int err = drop_to_unprivileged(c)) return err;
  if (int err = restrict_self(*c.ruleset)) return err;
  if (int err = close_inherited_fds_but(c.broker ? c.broker->target_end() : -1)) return err;
  int listener = -1;
  if (int err = install_seccomp_filter(spec, c.broker ? &listener : nullptr)) return err;
  if (c.broker) return c.broker->send_listener(listener);
  return 0;
}

} // namespace

int run_contained(const jail_spec& spec) {
  auto t = clock::now();
  prepared_ruleset ruleset;
  if (int err = prepare_landlock(spec, ruleset)) {
    report_exited(127 << 8, 0, 0, 0, false);
    return err;
  }
  report_step("landlock", t);

  contained_start c;
  c.spec = &spec;
  c.ruleset = &ruleset;
  c.change_ids = spec.uid_inside != ::getuid() || spec.gid_inside != ::getgid();
  if (spec.process_budget > 0) {
    rlim_t n = static_cast<rlim_t>(processes_of(spec.uid_inside) + spec.process_budget);
    c.nproc = {n, n};
    c.set_nproc = true;
  }

  std::optional<connect_broker> broker;
  if (spec.seccomp == seccomp_variant::contained_brokered) {
    t = clock::now();
    std::vector<sockaddr_in> bound;
    if (int err = hand_over_egress_listeners(spec, &bound)) {
      report_exited(127 << 8, 0, 0, 0, false);
      return err;
    }
    std::vector<broker_route> routes;
    for (std::size_t i = 0; i < bound.size() && i < spec.egress_ports.size(); ++i)
      routes.push_back({spec.egress_ports[i], bound[i]});
    broker.emplace(std::move(routes));
    if (int err = broker->prepare()) {
      report_exited(127 << 8, 0, 0, 0, false);
      return err;
    }
    c.broker = &*broker;
    report_step("egress", t);
  }

  pre_exec_hook confine = [&c] { return confine_target(c); };
  return supervise_target(spec, confine, c.broker);
}

} // namespace corral::helper
