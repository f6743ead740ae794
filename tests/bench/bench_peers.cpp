// corral_bench_peers: the landlock tier against its peer and its floor, all in this one run.
// For `/bin/true` and `python3 -c pass`: bare posix_spawn (the floor), bubblewrap with every
// namespace unshared and a comparable read-only view (the peer), and corral's in-process
// host and landlock tiers. Prints medians, p90s and the ratios issue targets are stated in.
// Usage: corral_bench_peers  (env BENCH_N, default 200)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/runtime.hpp"
#include "tests/bench/bench_util.hpp"
#include "tests/bench/peer_commands.hpp"
#include "tests/bench/step_tally.hpp"

namespace corral::bench {

namespace {

void print(const char* name, const stats& s, int n) {
  std::printf("%s median_us=%.1f p90_us=%.1f n=%d\n", name, s.median_us, s.p90_us, n);
}

} // namespace

int run() {
  spdlog::set_level(spdlog::level::warn);
  const int n = env_int("BENCH_N", 200);
  const int warmup = std::max(3, n / 20);

  bench_state_dir state_dir("corral_bench_peers");
  if (!state_dir.ok()) return 1;
  const std::string& state_tmpl = state_dir.path();

  // Two runtimes: one keeping a warm jail armed (the default), one starting every jail cold.
  auto start = [&](const std::string& state, std::size_t warm) -> std::unique_ptr<runtime> {
    runtime_options o;
    o.prof.tier = "landlock";
    o.allow_host = true;  // the host tier is measured beside it, never used as a fallback
    o.exec_helper = CORRAL_BENCH_HELPER;
    o.state_dir = state_tmpl + "/" + state;
    o.warm_jails = warm;
    auto started = runtime::start(std::move(o));
    if (!started) {
      std::fprintf(stderr, "corral_bench_peers: runtime::start: %s\n", started.error().describe().c_str());
      return nullptr;
    }
    return std::move(*started);
  };
  // BENCH_WARM_JAILS: the pool size of the warm runtime (default: the runtime's default).
  std::size_t pool = runtime_options{}.warm_jails;
  if (const char* v = std::getenv("BENCH_WARM_JAILS")) pool = std::strtoul(v, nullptr, 10);
  auto warm_rt = start("state", pool);
  auto cold_rt = start("state-cold", 0);
  if (!warm_rt || !cold_rt) return 1;
  // A request arriving while a jail waits armed: what one execution costs at a steady pace.
  auto until_armed = [&] {
    for (int i = 0; i < 2000 && warm_rt->warm_jails_ready() == 0; ++i) ::usleep(1000);
  };
  // `steps`, when given, tallies each result's setup steps.
  auto in_tier = [&](const std::string& tier, std::vector<std::string> argv, runtime* rt_ptr,
                     step_tally* steps = nullptr) {
    exec_request req;
    req.language = "argv";
    req.tier = tier;
    req.argv = std::move(argv);
    return [rt = rt_ptr, req, steps] {
      auto r = rt->exec(req);
      if (!r) std::fprintf(stderr, "corral_bench_peers: tier %s: %s\n", req.tier.c_str(), r.error().describe().c_str());
      else if (r->exit_code != 0) std::fprintf(stderr, "corral_bench_peers: tier %s: exit %d\n", req.tier.c_str(), r->exit_code.value_or(-1));
      else if (steps) steps->add(*r);
      return r && r->exit_code == 0;
    };
  };

  const std::string bwrap = find_program("bwrap", {"/usr/bin/bwrap", "/usr/local/bin/bwrap"});
  std::printf("# corral_bench_peers n=%d warmup=%d cores=%ld warm_jails=%zu\n", n, warmup, ::sysconf(_SC_NPROCESSORS_ONLN), pool);
  struct program {
    const char* label;
    std::vector<std::string> argv;
  };
  for (const program& p : {program{"true", {"/bin/true"}}, program{"python_pass", {"/usr/bin/python3", "-c", "pass"}}}) {
    auto spawn = summarize(sample(warmup, n, [&] { return spawn_and_wait(p.argv); }));
    print(("spawn_" + std::string(p.label)).c_str(), spawn, n);
    stats peer{};
    if (bwrap.empty()) {
      std::printf("bwrap_%s skipped: bubblewrap is not installed (apt-get install bubblewrap)\n", p.label);
    } else {
      peer = summarize(sample(warmup, n, [&] { return spawn_and_wait(bwrap_argv(bwrap, p.argv)); }));
      print(("bwrap_" + std::string(p.label)).c_str(), peer, n);
    }
    auto host = summarize(sample(warmup, n, in_tier("host", p.argv, cold_rt.get())));
    print(("host_" + std::string(p.label)).c_str(), host, n);
    step_tally cold_steps, warm_steps;
    auto cold = summarize(sample(warmup, n, in_tier("landlock", p.argv, cold_rt.get(), &cold_steps)));
    print(("landlock_cold_" + std::string(p.label)).c_str(), cold, n);
    auto landlock = summarize(sample(warmup, n, in_tier("landlock", p.argv, warm_rt.get(), &warm_steps), until_armed));
    print(("landlock_" + std::string(p.label)).c_str(), landlock, n);
    // Back to back, the next request comes while the pool re-arms: some start cold.
    auto busy = summarize(sample(warmup, n, in_tier("landlock", p.argv, warm_rt.get())));
    print(("landlock_back_to_back_" + std::string(p.label)).c_str(), busy, n);
    std::printf("ratio_%s landlock_vs_spawn=%.2f landlock_vs_host=%.2f landlock_cold_vs_spawn=%.2f", p.label,
                landlock.median_us / spawn.median_us, landlock.median_us / host.median_us,
                cold.median_us / spawn.median_us);
    if (!bwrap.empty())
      std::printf(" landlock_vs_bwrap=%.2f landlock_cold_vs_bwrap=%.2f bwrap_vs_spawn=%.2f",
                  landlock.median_us / peer.median_us, cold.median_us / peer.median_us,
                  peer.median_us / spawn.median_us);
    std::printf("\n");
    // Where each path's time goes: the runtime's phases and, cold, the helper's steps.
    cold_steps.print(std::string("landlock_cold_") + p.label, cold);
    warm_steps.print(std::string("landlock_") + p.label, landlock);
  }
  return 0;
}

} // namespace corral::bench

int main() { return corral::bench::run(); }
