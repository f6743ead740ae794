// The setup steps of many results, by name in the order they were first reported, and
// their medians: where an in-process execution's latency goes (its phases in the runtime:
// lease, spawn, run, lease_report; and, cold, the exec helper's own steps inside them).
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "actors/exec_result.hpp"
#include "tests/bench/bench_util.hpp"

namespace corral::bench {

class step_tally {
public:
  void add(const exec_result& r) {
    for (const auto& step : r.steps) {
      auto it = std::find_if(steps_.begin(), steps_.end(), [&](auto& s) { return s.first == step.name; });
      if (it == steps_.end()) it = steps_.insert(steps_.end(), {step.name, {}});
      it->second.push_back(static_cast<double>(step.micros));
    }
  }
  bool empty() const { return steps_.empty(); }
  // One line per step: `step <name> <label> median_us=… p90_us=… share=…` (of `whole`).
  void print(const std::string& label, const stats& whole) const {
    for (const auto& [name, us] : steps_) {
      auto st = summarize(us);
      std::printf("step %s %s median_us=%.1f p90_us=%.1f share=%.2f\n", name.c_str(), label.c_str(), st.median_us,
                  st.p90_us, st.median_us / whole.median_us);
    }
  }

private:
  std::vector<std::pair<std::string, std::vector<double>>> steps_;
};

} // namespace corral::bench
