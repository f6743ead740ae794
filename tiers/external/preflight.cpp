#include "tiers/external/preflight.hpp"

#include "tiers/tier.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace corral {

namespace {

constexpr std::size_t kMaxOutput = 8192;

} // namespace

std::string find_on_path(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  auto found = resolve_program(name, path ? path : "/usr/local/bin:/usr/bin:/bin");
  return found ? *found : "";
}

probe_result run_probe(const std::vector<std::string>& argv, std::chrono::milliseconds deadline) {
  probe_result r;
  if (argv.empty()) {
    r.error = "no probe command";
    return r;
  }
  int out[2];
  if (::pipe2(out, O_CLOEXEC) < 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::string path_env = std::string("PATH=") + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  char* envp[] = {path_env.data(), nullptr};
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    r.error = argv[0] + ": " + std::strerror(rc);
    return r;
  }
  r.ran = true;
  auto until = std::chrono::steady_clock::now() + deadline;
  bool open = true;
  while (open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{out[0], POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    char buf[1024];
    ssize_t got = ::read(out[0], buf, sizeof buf);
    if (got <= 0) {
      open = false;
      break;
    }
    if (r.output.size() < kMaxOutput) r.output.append(buf, static_cast<std::size_t>(std::min<ssize_t>(got, kMaxOutput - r.output.size())));
  }
  ::close(out[0]);
  // EOF does not mean exited; give the rest of the deadline to the exit itself.
  int status = 0;
  for (;;) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() >= until) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    ::usleep(2000);
  }
  if (!r.timed_out && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

} // namespace corral
