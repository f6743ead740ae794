// corral_bench_cli: a one-shot `corral run` as a whole process, against its peers and the
// floor, interleaved in this one run so that the machine's noise falls on all of them.
// For `/bin/true` and `python3 -c pass`, each round runs once each of: bare posix_spawn,
// corral_bench_floor (namespaces + view + exec, no runtime), bwrap, firejail and nsjail
// (each where installed), `corral run` and `corral-full run` (the program `corral` was
// before the lean split, measured here for the before/after), and `corral run --connect`
// to a `corral serve` this bench starts (its warm pool). Prints medians, p90s and the
// ratios issue 17 states its targets in.
// Usage: corral_bench_cli  (env BENCH_CLI_N, default 100 rounds; BENCH_CLI_BEFORE=another
// build's corral to set beside it, in-process and through the same daemon)
#include <csignal>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "tests/bench/bench_util.hpp"
#include "tests/bench/peer_commands.hpp"

namespace corral::bench {

namespace {

struct contender {
  std::string name;
  std::vector<std::string> argv;  // the program's argv is appended
  std::vector<double> us;
};

double median_of(const contender& c) { return summarize(c.us).median_us; }

} // namespace

// A `corral serve` for the --connect contender, on a socket in a throwaway dir, stopped
// (SIGTERM, then waited for) at the end of the bench.
class bench_daemon {
public:
  bench_daemon() {
    if (!dir_.ok()) return;
    socket_ = dir_.path() + "/corral.sock";
    pid_ = spawn_quiet({CORRAL_BENCH_CLI, "serve", "--socket", socket_, "--state-dir", dir_.path() + "/state"});
    // The socket appears once it accepts; a first run warms the daemon's pool.
    for (int i = 0; pid_ > 0 && i < 200 && ::access(socket_.c_str(), F_OK) != 0; ++i) ::usleep(50'000);
  }
  ~bench_daemon() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    wait_status(pid_);
  }
  bool ok() const { return pid_ > 0 && ::access(socket_.c_str(), F_OK) == 0; }
  const std::string& socket() const { return socket_; }

private:
  bench_state_dir dir_{"corral_bench_cli"};
  std::string socket_;
  pid_t pid_ = -1;
};

int run() {
  const int n = env_int("BENCH_CLI_N", 100);
  const int warmup = std::max(3, n / 20);
  std::printf("# corral_bench_cli n=%d warmup=%d cores=%ld (interleaved rounds, whole processes)\n", n, warmup,
              ::sysconf(_SC_NPROCESSORS_ONLN));

  const std::string bwrap = find_program("bwrap", {"/usr/bin/bwrap"});
  const std::string firejail = find_program("firejail", {"/usr/bin/firejail"});
  std::string nsjail = find_program("nsjail");
  if (const char* given = std::getenv("NSJAIL"); given && ::access(given, X_OK) == 0) nsjail = given;
  if (bwrap.empty()) std::printf("bwrap skipped: bubblewrap is not installed (scripts/bench installs it)\n");
  if (firejail.empty()) std::printf("firejail skipped: firejail is not installed (scripts/bench installs it)\n");
  if (nsjail.empty()) std::printf("nsjail skipped: not on PATH and $NSJAIL unset (Debian does not package it)\n");
  bench_daemon daemon;
  if (!daemon.ok()) std::printf("corral_connect skipped: corral serve did not come up\n");

  struct program {
    const char* label;
    std::vector<std::string> argv;
  };
  for (const program& p : {program{"true", {"/bin/true"}}, program{"python_pass", {"/usr/bin/python3", "-c", "pass"}}}) {
    std::vector<contender> all;
    all.push_back({"spawn", p.argv, {}});
    std::vector<std::string> floor = {CORRAL_BENCH_FLOOR};
    floor.insert(floor.end(), p.argv.begin(), p.argv.end());
    all.push_back({"floor", floor, {}});
    if (!bwrap.empty()) all.push_back({"bwrap", bwrap_argv(bwrap, p.argv), {}});
    if (!firejail.empty()) all.push_back({"firejail", firejail_argv(firejail, p.argv), {}});
    if (!nsjail.empty()) all.push_back({"nsjail", nsjail_argv(nsjail, p.argv), {}});
    for (auto [name, cli] : {std::pair{"corral", CORRAL_BENCH_CLI}, std::pair{"corral_full", CORRAL_BENCH_FULL}}) {
      std::vector<std::string> a = {cli, "run", "--tier", "landlock", "--"};
      a.insert(a.end(), p.argv.begin(), p.argv.end());
      all.push_back({name, a, {}});
    }
    // The contained tier (no namespaces): the cheapest isolating tier, beside the landlock
    // tier and posix_spawn in the same rounds.
    {
      std::vector<std::string> a = {CORRAL_BENCH_CLI, "run", "--tier", "contained", "--"};
      a.insert(a.end(), p.argv.begin(), p.argv.end());
      all.push_back({"corral_contained", a, {}});
    }
    // BENCH_CLI_BEFORE: a corral built from another commit (with its corral-exec beside
    // it), measured in the same rounds for a before/after, in-process and through the same
    // daemon. Each daemon run comes after an in-process one, so that both find the pool
    // re-armed alike (a jail is armed once the previous taker is done); on two cores the
    // contender after each daemon run (corral_before, the next round's spawn) shares the
    // CPU with that re-arming.
    const char* before = std::getenv("BENCH_CLI_BEFORE");
    if (before && ::access(before, X_OK) != 0) before = nullptr;
    auto through_daemon = [&](const char* name, const char* cli) {
      if (!daemon.ok()) return;
      std::vector<std::string> a = {cli, "run", "--connect", daemon.socket(), "--"};
      a.insert(a.end(), p.argv.begin(), p.argv.end());
      all.push_back({name, a, {}});
    };
    if (before) {
      through_daemon("corral_before_connect", before);
      std::vector<std::string> a = {before, "run", "--tier", "landlock", "--"};
      a.insert(a.end(), p.argv.begin(), p.argv.end());
      all.push_back({"corral_before", a, {}});
    }
    through_daemon("corral_connect", CORRAL_BENCH_CLI);
    for (int round = 0; round < warmup + n; ++round)
      for (auto& c : all) {
        auto start = clock_type::now();
        if (!spawn_and_wait(c.argv)) {
          std::fprintf(stderr, "corral_bench_cli: %s failed (run it by hand to see why)\n", c.name.c_str());
          return 1;
        }
        if (round >= warmup)
          c.us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
      }
    const contender* peer = nullptr;
    const contender* corral = nullptr;
    for (const auto& c : all) {
      auto s = summarize(c.us);
      std::printf("cli_%s_%s median_us=%.1f p90_us=%.1f n=%d\n", p.label, c.name.c_str(), s.median_us, s.p90_us, n);
      if (c.name == "bwrap") peer = &c;
      if (c.name == "corral") corral = &c;
    }
    std::printf("ratio_cli_%s", p.label);
    for (const auto& c : all) {
      if (c.name == "spawn" || c.name == "bwrap") continue;
      if (peer) std::printf(" %s_vs_bwrap=%.2f", c.name.c_str(), median_of(c) / median_of(*peer));
    }
    std::printf(" corral_vs_floor=%.2f", median_of(*corral) / median_of(all[1]));
    for (const auto& c : all)
      if (c.name == "corral_contained")
        std::printf(" contained_vs_spawn=%.2f contained_vs_landlock=%.2f", median_of(c) / median_of(all[0]),
                    median_of(c) / median_of(*corral));
    if (peer) std::printf(" bwrap_vs_floor=%.2f", median_of(*peer) / median_of(all[1]));
    std::printf("\n");
  }
  return 0;
}

} // namespace corral::bench

int main() { return corral::bench::run(); }
