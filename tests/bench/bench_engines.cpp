// corral_bench_engines: what corral adds over the engine it drives, as whole processes,
// interleaved round by round:
// - `corral run --tier container -- /bin/true` against the engine's own `run` with the very
//   flags the tier passes (container_tier::bare_run_argv);
// - `corral run --tier gvisor -- /bin/true` against `runsc run` of the very bundle the tier
//   writes (gvisor_tier::plan, each round under a new container id; `runsc run` deletes
//   its container when it exits).
// Usage: corral_bench_engines --config FILE   (a profile; [sandbox.container] set for the
//        container pair; env BENCH_ENGINE_N, default 20 rounds)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "config/toml/toml_profile.hpp"
#include "tests/bench/bench_util.hpp"
#include "tiers/external/container_tier.hpp"
#include "tiers/external/gvisor_tier.hpp"
#include "tiers/external/preflight.hpp"
#include "tiers/kernel_features.hpp"

namespace corral::bench {

namespace {

const std::vector<std::string> kProgram = {"/bin/true"};

// Runs `engine` (argv for a round) and corral's argv alternately, two warm-up rounds first;
// prints both medians and their ratio under `name`. False when a run failed.
template <class EngineArgv>
bool compare(const char* name, const char* engine_label, EngineArgv engine, const std::vector<std::string>& corral,
             int n) {
  std::vector<double> engine_us, corral_us;
  for (int round = 0; round < n + 2; ++round) {
    for (auto* which : {&engine_us, &corral_us}) {
      auto argv = which == &engine_us ? engine(round) : corral;
      auto start = clock_type::now();
      if (!spawn_and_wait(argv)) {
        std::fprintf(stderr, "corral_bench_engines: %s failed (run it by hand to see why)\n",
                     which == &engine_us ? argv.front().c_str() : name);
        return false;
      }
      if (round >= 2) which->push_back(std::chrono::duration<double, std::micro>(clock_type::now() - start).count());
    }
  }
  auto e = summarize(engine_us), c = summarize(corral_us);
  std::printf("%s_engine_true median_ms=%.1f p90_ms=%.1f n=%d (%s)\n", name, e.median_us / 1000, e.p90_us / 1000, n,
              engine_label);
  std::printf("%s_corral_true median_ms=%.1f p90_ms=%.1f n=%d\n", name, c.median_us / 1000, c.p90_us / 1000, n);
  std::printf("ratio_%s corral_vs_engine=%.2f\n", name, c.median_us / e.median_us);
  return true;
}

std::vector<std::string> corral_argv(const std::string& config, const char* tier) {
  std::vector<std::string> argv = {CORRAL_BENCH_CLI, "run", "--config", config, "--tier", tier, "--"};
  argv.insert(argv.end(), kProgram.begin(), kProgram.end());
  return argv;
}

bool container_pair(const profile& prof, const std::string& config, int n) {
  container_tier tier(prof, std::chrono::seconds(60));
  if (auto s = tier.available(); !s.available) {
    std::printf("container_vs_engine skipped: the container tier is unavailable: %s\n", s.reason.c_str());
    return true;
  }
  auto engine = tier.bare_run_argv(find_on_path(prof.container.engine), {}, kProgram);
  std::string label = prof.container.engine + " run with the tier's flags";
  return compare("container", label.c_str(), [&](int) { return engine; }, corral_argv(config, "container"), n);
}

bool gvisor_pair(const profile& prof, const std::string& config, int n) {
  gvisor_tier tier(prof, detect_kernel_features(), std::chrono::seconds(60));
  if (auto s = tier.available(); !s.available) {
    std::printf("gvisor_vs_runsc skipped: the gvisor tier is unavailable: %s\n", s.reason.c_str());
    return true;
  }
  // The tier writes its bundle beside the scratch dir: both in a dir of the bench's own.
  std::string tmpl = (std::filesystem::temp_directory_path() / "corral-bench-gvisor-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) return false;
  launch_request request;
  request.argv = kProgram;
  request.scratch_dir = tmpl + "/scratch";
  std::filesystem::create_directory(request.scratch_dir);
  lease_grant grant;
  grant.cgroup_procs = {"(the bench runs runsc outside any lease)"};
  auto plan = tier.plan(request, grant);
  bool ok = true;
  if (!plan) {
    std::printf("gvisor_vs_runsc skipped: %s\n", plan.error().describe().c_str());
  } else {
    // runsc ... run --bundle B ID: a new ID each round, as corral names each sandbox anew.
    auto argv = plan->spec.argv;
    auto id = argv.back();
    ok = compare("gvisor", "runsc run of the tier's bundle", [&](int round) {
      argv.back() = id + "-" + std::to_string(round);
      return argv;
    }, corral_argv(config, "gvisor"), n);
  }
  std::error_code ignored;
  std::filesystem::remove_all(tmpl, ignored);
  return ok;
}

} // namespace

int run(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  std::string config;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--config") == 0) config = argv[i + 1];
  const int n = env_int("BENCH_ENGINE_N", 20);
  auto prof = load_profile_here(config);
  if (!prof) {
    std::printf("engines skipped: %s\n", prof.error().describe().c_str());
    return 0;
  }
  bool ok = container_pair(*prof, config, n);
  ok = gvisor_pair(*prof, config, n) && ok;
  return ok ? 0 : 1;
}

} // namespace corral::bench

int main(int argc, char** argv) { return corral::bench::run(argc, argv); }
