#include "proto/cli/run_streaming.hpp"

#include <algorithm>
#include <iostream>
#include <unistd.h>

#include <atomic>

#include <spdlog/spdlog.h>

#include "config/tighten.hpp"
#include "proto/cli/ending.hpp"
#include "proto/cli/interrupt_watch.hpp"
#include "config/write_all.hpp"
#include "proto/jsonrpc/result_json.hpp"

namespace corral::cli {

namespace {

// What the supervisor will run with: names the limit in a line that says why it ended.
limits effective_limits(const profile& prof, const exec_request& r) {
  limit_request asked{r.timeout, r.memory_limit_bytes, r.pids_limit, r.output_cap, r.cpu_cores};
  auto effective = tighten(prof, asked);
  return effective ? *effective : prof.limit;
}

} // namespace

int run_streaming(runtime& rt, const run_options& options) {
  bool full_filesystem = false;  // its stderr said ENOSPC or EFBIG (see full_filesystem_line)
  output_callbacks out;
  // In --json mode the output is the result's, printed at the end.
  if (!options.json) out.on_stdout = [](std::string_view bytes) { write_all(STDOUT_FILENO, bytes); };
  out.on_stderr = [&](std::string_view bytes) {
    if (!options.json) write_all(STDERR_FILENO, bytes);
    full_filesystem = full_filesystem || mentions_full_filesystem(bytes);
  };
  // One cancel per signal: the second skips the grace (exec_control).
  exec_control control;
  std::atomic<int> interrupted_by{0};
  expected<exec_result> outcome = make_failure(failure_kind::internal, "not run");
  {
    interrupt_watch interrupts([&](int sig) {
      int none = 0;
      interrupted_by.compare_exchange_strong(none, sig);
      spdlog::debug("corral run: got {}: cancelling", signal_name(sig));
      control.cancel();
    });
    outcome = rt.exec(options.request, out, &control);
  }
  if (int sig = interrupted_by.load()) {
    // What arrived was printed as it came; the result only adds the why.
    if (!outcome) std::cerr << "corral: " << outcome.error().describe() << "\n";
    std::cerr << "corral: got " << signal_name(sig) << "; the program was ended\n";
    if (options.json && outcome) std::cout << to_json(*outcome).dump() << "\n";
    return 128 + sig;
  }
  if (!outcome) {
    if (options.json) std::cout << to_json(outcome.error()).dump() << "\n";
    std::cerr << "corral: " << outcome.error().describe() << "\n";
    return failure_status(outcome.error());
  }
  const auto& r = *outcome;
  auto effective = effective_limits(rt.frozen_profile(), options.request);
  if (options.json) std::cout << to_json(r).dump() << "\n";
  else std::cerr << truncation_lines(r, effective.output_cap);
  for (auto& n : r.not_enforced) spdlog::debug("not enforced by tier {}: {}", r.tier, n);
  if (auto line = ending_line(r, &effective); !line.empty()) std::cerr << line << "\n";
  else if (full_filesystem && result_status(r) != 0) std::cerr << full_filesystem_line(effective) << "\n";
  return result_status(r);
}

} // namespace corral::cli
