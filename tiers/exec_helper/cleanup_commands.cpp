#include "tiers/exec_helper/cleanup_commands.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace corral::helper {

namespace {

using clock = std::chrono::steady_clock;

[[noreturn]] void exec_cleanup(const std::vector<std::string>& argv) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
  // Its own group: the helper's group may be SIGKILLed by the runtime's last resort, and a
  // half-done removal is worse than a finished one.
  ::setpgid(0, 0);
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0)
    for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);  // never into the execution's output
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char path[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  char* envp[] = {path, nullptr};
  ::execve(argv[0].c_str(), args.data(), envp);
  _exit(127);
}

void run_one(const std::vector<std::string>& argv, std::chrono::milliseconds bound) {
  pid_t pid = ::fork();
  if (pid < 0) return;
  if (pid == 0) exec_cleanup(argv);
  auto until = clock::now() + bound;
  for (;;) {
    int status = 0;
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) return;
    if (clock::now() >= until) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return;
    }
    ::usleep(2000);
  }
}

} // namespace

void run_cleanup(const std::vector<std::vector<std::string>>& commands, std::chrono::milliseconds bound) {
  for (auto& argv : commands)
    if (!argv.empty()) run_one(argv, bound);
}

} // namespace corral::helper
