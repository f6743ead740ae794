// Where corral runs, for `corral doctor`: inside a container or pod or not, and, when the
// landlock tier is unavailable, which setting of the container or pod would unlock it, in
// words a platform engineer can act on. Measured from /proc and the environment.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tiers/kernel_features.hpp"

namespace corral {

struct run_environment {
  std::string container;         // "kubernetes", "podman", "docker", "container" or "" (none seen)
  std::vector<std::string> masked_proc;  // mounts over paths below /proc (a runtime's masks)
  bool proc_read_only_sys = false;       // /proc/sys mounted read-only
};

// `mountinfo` and `proc_1_cgroup` are parameters for the tests.
run_environment detect_run_environment(const std::string& mountinfo = "/proc/self/mountinfo",
                                       const std::string& proc_1_cgroup = "/proc/1/cgroup");

// One line per thing standing between this place and the landlock tier, each with the
// setting that removes it; empty when nothing does.
std::vector<std::string> landlock_tier_advice(const kernel_features& f, const run_environment& env);

nlohmann::json run_environment_json(const run_environment& env, const kernel_features& f);

} // namespace corral
