// corral_bench_engines: `corral run --tier container -- /bin/true` as a whole process against
// the engine's own `run` with the very flags the tier passes (container_tier::bare_run_argv),
// interleaved round by round: what corral adds over the engine it drives.
// Usage: corral_bench_engines --config FILE   (a profile with [sandbox.container] set;
//        env BENCH_ENGINE_N, default 20 rounds)
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "config/toml/toml_profile.hpp"
#include "tests/bench/bench_util.hpp"
#include "tiers/external/container_tier.hpp"
#include "tiers/external/preflight.hpp"

namespace corral::bench {

int run(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  std::string config;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--config") == 0) config = argv[i + 1];
  const int n = env_int("BENCH_ENGINE_N", 20);
  auto prof = load_profile_here(config);
  if (!prof) {
    std::printf("container_vs_engine skipped: %s\n", prof.error().describe().c_str());
    return 0;
  }
  container_tier tier(*prof, std::chrono::seconds(60));
  if (auto s = tier.available(); !s.available) {
    std::printf("container_vs_engine skipped: the container tier is unavailable: %s\n", s.reason.c_str());
    return 0;
  }
  const std::vector<std::string> program = {"/bin/true"};
  auto engine = tier.bare_run_argv(find_on_path(prof->container.engine), {}, program);
  std::vector<std::string> corral = {CORRAL_BENCH_CLI, "run", "--config", config, "--tier", "container", "--"};
  corral.insert(corral.end(), program.begin(), program.end());

  std::vector<double> engine_us, corral_us;
  for (int round = 0; round < n + 2; ++round) {  // two warm-up rounds
    for (auto* which : {&engine_us, &corral_us}) {
      auto start = clock_type::now();
      if (!spawn_and_wait(which == &engine_us ? engine : corral)) {
        std::fprintf(stderr, "corral_bench_engines: %s failed (run it by hand to see why)\n",
                     which == &engine_us ? engine.front().c_str() : "corral run --tier container");
        return 1;
      }
      if (round >= 2) which->push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
    }
  }
  auto e = summarize(engine_us), c = summarize(corral_us);
  std::printf("container_engine_true median_ms=%.1f p90_ms=%.1f n=%d (%s run with the tier's flags)\n",
              e.median_us / 1000, e.p90_us / 1000, n, prof->container.engine.c_str());
  std::printf("container_corral_true median_ms=%.1f p90_ms=%.1f n=%d\n", c.median_us / 1000, c.p90_us / 1000, n);
  std::printf("ratio_container corral_vs_engine=%.2f\n", c.median_us / e.median_us);
  return 0;
}

} // namespace corral::bench

int main(int argc, char** argv) { return corral::bench::run(argc, argv); }
