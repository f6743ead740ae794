// What every corral benchmark shares: nearest-rank percentiles, warm-up then timed
// samples, a plain posix_spawn+waitpid (the baseline every ratio is taken against), and a
// throwaway state dir.
#pragma once

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace corral::bench {

using clock_type = std::chrono::steady_clock;

struct stats {
  double median_us = 0;
  double p90_us = 0;
};

// Nearest-rank percentiles: no interpolation between samples that were never observed.
inline stats summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, static_cast<std::size_t>(q * us.size()))]; };
  return {at(0.5), at(0.9)};
}

// Runs `once` `warmup` times unmeasured (page cache, CAF workers, the helper's first exec),
// then `n` times, each timed alone. Stops the program on the first failure.
// `before`, when given, runs untimed ahead of each sample (waiting for a warm jail).
inline std::vector<double> sample(int warmup, int n, const std::function<bool()>& once,
                                  const std::function<void()>& before = {}) {
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < warmup + n; ++i) {
    if (before) before();
    auto start = clock_type::now();
    if (!once()) std::exit(1);
    auto took = std::chrono::duration<double, std::micro>(clock_type::now() - start).count();
    if (i >= warmup) us.push_back(took);
  }
  return us;
}

// posix_spawn with stdin and stderr on /dev/null and stdout on `out_fd` (or /dev/null): the
// child's pid, or -1 after saying why on stderr.
inline pid_t spawn_quiet(std::vector<std::string> args, int out_fd = -1) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (out_fd >= 0) posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
  else posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc == 0) return pid;
  std::fprintf(stderr, "corral_bench: posix_spawn %s: %s\n", argv[0], std::strerror(rc));
  return -1;
}

// The child's wait status (EINTR retried).
inline int wait_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return status;
}

// posix_spawn + waitpid with stdin/stdout/stderr on /dev/null, or stdout on `out_fd`.
inline bool spawn_and_wait(std::vector<std::string> args, int out_fd = -1) {
  const std::string program = args.front();
  pid_t pid = spawn_quiet(std::move(args), out_fd);
  if (pid < 0) return false;
  int status = wait_status(pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "corral_bench: %s exited with wait status %d\n", program.c_str(), status);
    return false;
  }
  return true;
}

// A temporary state dir for a bench's runtimes, removed with everything in it at the end.
class bench_state_dir {
public:
  explicit bench_state_dir(const char* who) {
    path_ = (std::filesystem::temp_directory_path() / "corral-bench-XXXXXX").string();
    if (!::mkdtemp(path_.data())) {
      std::fprintf(stderr, "%s: mkdtemp: %s\n", who, std::strerror(errno));
      path_.clear();
    }
  }
  ~bench_state_dir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  bench_state_dir(const bench_state_dir&) = delete;
  bench_state_dir& operator=(const bench_state_dir&) = delete;
  bool ok() const { return !path_.empty(); }
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

inline int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  int n = v ? std::atoi(v) : 0;
  return n > 0 ? n : fallback;
}

} // namespace corral::bench
