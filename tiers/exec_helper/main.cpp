// corral-exec: the exec helper. The runtime posix_spawns it with the target's stdio on
// fds 0-2, the serialized jail spec on fd 3 and the status channel on fd 4. It is its own
// binary because the runtime is multithreaded: between fork and exec only async-signal-
// safe calls are allowed there, while this single-threaded program may do real work
// (parse the spec, build a filesystem view, compile a seccomp filter) before its exec.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/prctl.h>
#include <unistd.h>

#include "tiers/exec_helper/cgroup_join.hpp"
#include "tiers/exec_helper/cleanup_commands.hpp"
#include "tiers/exec_helper/contained_launcher.hpp"
#include "tiers/exec_helper/jail_launcher.hpp"
#include "tiers/exec_helper/spec_frames.hpp"
#include "tiers/exec_helper/status_writer.hpp"
#include "tiers/exec_helper/target_supervisor.hpp"
#include "tiers/exec_helper/workspace_enter.hpp"
#include "tiers/jail/jail_spec.hpp"

namespace {

// A spec is a few KiB; anything near this is a bug or an attack on the helper.
constexpr std::size_t kMaxSpecBytes = 64u * 1024 * 1024;
// Each cleanup command (`runsc delete --force`, `podman rm -f`) gets at most this long.
constexpr std::chrono::milliseconds kCleanupBound{10'000};

// Cold start: the spec is everything up to EOF.
// `arrived`: when its first bytes came. A helper spawned ahead (the runtime's spare) waits
// idle for them, which is no step of the launch's.
bool read_spec(std::string& out, std::chrono::steady_clock::time_point& arrived) {
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(corral::kSpecFd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    if (out.empty()) arrived = std::chrono::steady_clock::now();
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > kMaxSpecBytes) return false;
  }
}

} // namespace

int main(int argc, char** argv) {
  auto start = std::chrono::steady_clock::now();
  // The status channel must not leak into the target; the spec fd is done after reading.
  ::fcntl(corral::kStatusFd, F_SETFD, FD_CLOEXEC);

  // If the runtime dies, end the execution (the helper's cleanup runs on SIGTERM). The
  // runtime spawns from its long-lived I/O thread, whose exit is the runtime's exit.
  // A runtime that died before this line never finishes writing the spec, so the parse
  // below fails and the helper exits without starting anything.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);

  // Warm: the armed spec is the first frame; fd 3 stays open for the launch (jail_spec.hpp).
  bool warm = argc > 1 && std::strcmp(argv[1], "--warm") == 0;
  std::string bytes;
  bool got = warm ? corral::helper::read_frame(corral::kSpecFd, bytes) == corral::helper::frame_read::ok
                  : read_spec(bytes, start);
  if (!got) {
    corral::helper::report_failed(errno ? errno : EINVAL, "spec", "cannot read the jail spec on fd 3");
    return 125;
  }
  if (!warm) ::close(corral::kSpecFd);
  auto spec = corral::parse_jail_spec(bytes);
  if (!spec) {
    corral::helper::report_failed(EINVAL, "spec", spec.error().message);
    return 125;
  }
  if (warm && spec->mode != corral::jail_mode::jail) {
    corral::helper::report_failed(EINVAL, "spec", "a warm helper takes jail specs only");
    return 125;
  }
  corral::helper::report_step("spec", start);

  if (spec->mode == corral::jail_mode::jail || spec->mode == corral::jail_mode::hold)
    return corral::helper::run_jailed(*spec, warm);
  if (spec->mode == corral::jail_mode::enter) return corral::helper::run_entered(*spec);
  if (spec->mode == corral::jail_mode::contained) return corral::helper::run_contained(*spec);
  // Host mode with a lease (an external runtime such as runsc): only the target joins the
  // cgroups, so the lease's kill-all ends the runtime's whole tree while the helper
  // survives it to run the cleanup and report.
  corral::helper::pre_exec_hook join;
  if (!spec->cgroup_procs.empty()) join = [&] { return corral::helper::join_cgroups(*spec); };
  corral::helper::target_ending ending;
  int rc = corral::helper::supervise_target(*spec, join, nullptr, &ending);
  if (!ending.by_itself) corral::helper::run_cleanup(spec->cleanup_unless_exited, kCleanupBound);
  corral::helper::run_cleanup(spec->cleanup, kCleanupBound);
  return rc;
}
