// corral_bench: what one execution costs against plain posix_spawn+waitpid, which setup
// steps that time goes to, and how fast a collector drains a flood past its cap.
// Usage: corral_bench [--tier NAME]  (env BENCH_N, BENCH_DRAIN_N)
//        corral_bench --all-tiers [--config FILE]  (env BENCH_TIER_N): /bin/true on every
//        tier available here, next to the posix_spawn baseline of the same run
// Every figure is measured in this run, baseline included, so ratios compare like with like.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <utility>
#include <memory>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/runtime.hpp"
#include "config/toml/toml_profile.hpp"
#include "tests/bench/bench_util.hpp"
#include "tests/bench/step_tally.hpp"
#include "tiers/default_tiers.hpp"
#include "tiers/kernel_features.hpp"

namespace corral::bench {

namespace {

constexpr std::uint64_t kDrainBytes = 1024ull * 1024 * 1024;

// The baseline for the collector: the same flood through a pipe, drained by a plain read loop.
bool spawn_and_drain_pipe(std::vector<std::string> args) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return false;
  pid_t pid = spawn_quiet(std::move(args), p[1]);
  ::close(p[1]);
  if (pid < 0) {
    ::close(p[0]);
    return false;
  }
  static char buf[1 << 16];
  for (;;) {
    ssize_t got = ::read(p[0], buf, sizeof buf);
    if (got == 0 || (got < 0 && errno != EINTR)) break;
  }
  ::close(p[0]);
  int status = wait_status(pid);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

double mb_per_s(double us) { return static_cast<double>(kDrainBytes) / us; }  // bytes/µs == MB/s

void print_latency(const char* name, const std::string& tier, const stats& s, const stats& base, int n) {
  std::printf("%s%s%s median_us=%.1f p90_us=%.1f ratio_vs_spawn=%.2f n=%d\n", name, tier.empty() ? "" : " tier=",
              tier.c_str(), s.median_us, s.p90_us, s.median_us / base.median_us, n);
}

int usage(int status) {
  std::fprintf(status ? stderr : stdout,
               "usage: corral_bench [--tier NAME] | --all-tiers [--config FILE]\n"
               "  --tier NAME    the tier the runtime and the CLI run on (default host)\n"
               "  --all-tiers    median latency of /bin/true on every tier available here\n"
               "  --config FILE  the corral.toml whose tier tables --all-tiers uses\n"
               "env: BENCH_N runs per latency figure (default 200), BENCH_DRAIN_N runs of the 1 GiB drain (default 3),\n"
               "     BENCH_TIER_N runs per tier with --all-tiers (default 20)\n");
  return status;
}

struct state_dir {
  std::string path;
  state_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "corral-bench-XXXXXX").string();
    if (::mkdtemp(tmpl.data())) path = tmpl;
  }
  ~state_dir() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
};

// /bin/true on each tier this machine offers, with the baseline measured in the same run.
// An unavailable tier is listed with its reason, never measured on another.
int all_tiers(const std::string& config) {
  profile prof;
  if (!config.empty()) {
    auto loaded = load_profile(config, std::filesystem::path(config).parent_path().string());
    if (!loaded) {
      std::fprintf(stderr, "corral_bench: %s\n", loaded.error().describe().c_str());
      return 1;
    }
    prof = std::move(*loaded);
  }
  const int n = env_int("BENCH_TIER_N", 20);
  const int warmup = 2;
  state_dir dir;
  if (dir.path.empty()) return 1;
  runtime_options o;
  o.prof = prof;
  o.allow_host = true;  // a benchmark, not production: the host tier is one of the figures
  o.exec_helper = CORRAL_BENCH_HELPER;
  o.state_dir = dir.path + "/state";
  auto started = runtime::start(std::move(o));
  if (!started) {
    std::fprintf(stderr, "corral_bench: runtime::start: %s\n", started.error().describe().c_str());
    return 1;
  }
  auto rt = std::move(*started);
  auto base = summarize(sample(warmup, n, [] { return spawn_and_wait({"/bin/true"}); }));
  std::printf("# corral_bench --all-tiers n=%d cores=%ld\n", n, ::sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("spawn_true median_us=%.1f p90_us=%.1f n=%d\n", base.median_us, base.p90_us, n);
  auto tiers = build_default_tiers(prof, detect_kernel_features());
  for (auto& t : tiers->all()) {
    auto st = t->available();
    if (!st.available) {
      std::printf("tier_true tier=%s skipped: %s\n", t->name().c_str(), st.reason.c_str());
      continue;
    }
    exec_request req;
    req.language = "argv";
    req.argv = {"/bin/true"};
    req.tier = t->name();
    // One unmeasured run says why a tier that passed its preflight still cannot run.
    std::string failed;
    auto first = rt->exec(req);
    if (!first) failed = first.error().describe();
    else if (first->exit_code != 0) failed = "exit " + std::to_string(first->exit_code.value_or(-1)) + ": " + first->err.data;
    if (!failed.empty()) {
      std::printf("tier_true tier=%s failed: %s\n", t->name().c_str(), failed.c_str());
      continue;
    }
    auto s = summarize(sample(warmup, n, [&] {
      auto r = rt->exec(req);
      return r && r->exit_code == 0;
    }));
    print_latency("tier_true", t->name(), s, base, n);
  }
  return 0;
}

} // namespace

int run(int argc, char** argv) {
  std::string tier = "host";
  std::string config;
  bool every_tier = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tier" && i + 1 < argc) tier = argv[++i];
    else if (a == "--all-tiers") every_tier = true;
    else if (a == "--config" && i + 1 < argc) config = argv[++i];
    else if (a == "--help" || a == "-h") return usage(0);
    else return usage(2);
  }
  // The runtime logs one line per execution at info; thousands of them would bury the figures.
  spdlog::set_level(spdlog::level::warn);
  if (every_tier) return all_tiers(config);
  const int n = env_int("BENCH_N", 200);
  const int drain_n = env_int("BENCH_DRAIN_N", 3);
  const int warmup = std::max(3, n / 20);

  bench_state_dir state_dir("corral_bench");
  if (!state_dir.ok()) return 1;
  const std::string& state_tmpl = state_dir.path();

  runtime_options o;
  o.prof.tier = tier;
  o.allow_host = tier == "host";
  o.exec_helper = CORRAL_BENCH_HELPER;
  o.state_dir = state_tmpl + "/state";
  auto started = runtime::start(std::move(o));
  if (!started) {
    std::fprintf(stderr, "corral_bench: runtime::start: %s\n", started.error().describe().c_str());
    return 1;
  }
  auto rt = std::move(*started);

  auto exec_ok = [&](exec_request req, exec_result* out = nullptr) {
    req.tier = tier;
    auto r = rt->exec(req);
    if (!r) {
      std::fprintf(stderr, "corral_bench: exec on tier %s: %s\n", tier.c_str(), r.error().describe().c_str());
      return false;
    }
    if (out) *out = std::move(*r);
    return true;
  };
  exec_request true_req;
  true_req.language = "argv";
  true_req.argv = {"/bin/true"};

  std::printf("# corral_bench tier=%s n=%d warmup=%d cores=%ld\n", tier.c_str(), n, warmup, ::sysconf(_SC_NPROCESSORS_ONLN));
  auto base = summarize(sample(warmup, n, [] { return spawn_and_wait({"/bin/true"}); }));
  std::printf("spawn_true median_us=%.1f p90_us=%.1f n=%d\n", base.median_us, base.p90_us, n);

  step_tally steps;
  auto inproc = summarize(sample(warmup, n, [&] {
    exec_result r;
    if (!exec_ok(true_req, &r)) return false;
    steps.add(r);
    return true;
  }));
  print_latency("exec_true_inprocess", tier, inproc, base, n);

  std::vector<std::string> cli = {CORRAL_BENCH_CLI, "run", "--tier", tier};
  if (tier == "host") cli.push_back("--allow-host");
  cli.insert(cli.end(), {"--", "/bin/true"});
  auto via_cli = summarize(sample(warmup, n, [&] { return spawn_and_wait(cli); }));
  print_latency("exec_true_cli", tier, via_cli, base, n);

  // The flood: the collector keeps its cap (1 MiB by default) and drains the rest.
  exec_request flood;
  flood.language = "argv";
  flood.argv = {"head", "-c", std::to_string(kDrainBytes), "/dev/zero"};
  exec_result last;
  auto collector = summarize(sample(1, drain_n, [&] {
    return exec_ok(flood, &last) && last.out.dropped_bytes + 1024 * 1024 == kDrainBytes;
  }));
  auto devnull = summarize(sample(1, drain_n, [] {
    return spawn_and_wait({"/usr/bin/head", "-c", std::to_string(kDrainBytes), "/dev/zero"});
  }));
  auto pipe = summarize(sample(1, drain_n, [] {
    return spawn_and_drain_pipe({"/usr/bin/head", "-c", std::to_string(kDrainBytes), "/dev/zero"});
  }));
  std::printf("drain_1g_collector tier=%s mb_per_s=%.0f median_ms=%.1f kept=%zu dropped=%llu n=%d\n", tier.c_str(),
              mb_per_s(collector.median_us), collector.median_us / 1000, last.out.data.size(),
              static_cast<unsigned long long>(last.out.dropped_bytes), drain_n);
  std::printf("drain_1g_direct_devnull mb_per_s=%.0f median_ms=%.1f ratio_collector_vs_direct=%.2f n=%d\n",
              mb_per_s(devnull.median_us), devnull.median_us / 1000, mb_per_s(collector.median_us) / mb_per_s(devnull.median_us),
              drain_n);
  std::printf("drain_1g_direct_pipe mb_per_s=%.0f median_ms=%.1f ratio_collector_vs_pipe=%.2f n=%d\n",
              mb_per_s(pipe.median_us), pipe.median_us / 1000, mb_per_s(collector.median_us) / mb_per_s(pipe.median_us),
              drain_n);

  // Where the in-process latency goes, as the exec helper reports its setup steps
  // (warm-up runs included: a step's cost does not depend on being measured).
  if (steps.empty()) std::printf("step_breakdown skipped: tier %s reports no setup steps\n", tier.c_str());
  steps.print("tier=" + tier, inproc);
  return 0;
}

} // namespace corral::bench

int main(int argc, char** argv) { return corral::bench::run(argc, argv); }
