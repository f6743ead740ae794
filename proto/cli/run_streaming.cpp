#include "proto/cli/run_streaming.hpp"

#include <algorithm>
#include <iostream>
#include <unistd.h>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/execution.hpp"
#include "actors/execution_messages.hpp"
#include "actors/output_collector.hpp"
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
  caf::scoped_actor self{rt.system()};
  auto me = caf::actor_cast<caf::actor>(self);
  exec_request request = options.request;
  // Also in --json mode: execution_started is what hands us the execution to cancel.
  request.live_output = me;
  std::optional<exec_outcome> outcome;
  bool full_filesystem = false;  // its stderr said ENOSPC or EFBIG (see full_filesystem_line)
  {
    interrupt_watch interrupts(me);  // gone before the system: its thread sends to `self`
    rt.exec_async(request, [me](expected<exec_result> r) {
      exec_outcome o;
      o.ok = r.has_value();
      if (o.ok) o.result = std::move(*r);
      else o.error = r.error();
      caf::anon_send(me, std::move(o));
    });
    caf::actor execution;
    int interrupted_by = 0;
    // One cancel per signal, at most two: the second skips the grace.
    unsigned signals = 0, cancels = 0;
    auto send_cancels = [&] {
      for (; execution && cancels < std::min(signals, 2u); ++cancels) self->send(execution, cancel_atom::value);
    };
    while (!outcome) {
      self->receive(
          [&](execution_started& started) {
            execution = started.execution;
            send_cancels();
          },
          [&](output_chunk& chunk) {
            if (!options.json)
              write_all(chunk.stream == stream_kind::err ? STDERR_FILENO : STDOUT_FILENO, chunk.bytes);
            if (chunk.stream == stream_kind::err) full_filesystem = full_filesystem || mentions_full_filesystem(chunk.bytes);
            self->send(caf::actor_cast<caf::actor>(self->current_sender()), ack_atom::value,
                       static_cast<std::uint64_t>(chunk.bytes.size()));
          },
          [&](interrupt_atom, int sig) {
            if (!interrupted_by) interrupted_by = sig;
            ++signals;
            spdlog::debug("corral run: got {} (number {}): cancelling", signal_name(sig), signals);
            send_cancels();
          },
          [&](exec_outcome& o) { outcome = std::move(o); });
    }
    if (interrupted_by) {
      // What arrived was printed as it came; the result only adds the why.
      if (!outcome->ok) std::cerr << "corral: " << outcome->error.describe() << "\n";
      std::cerr << "corral: got " << signal_name(interrupted_by) << "; the program was ended\n";
      if (options.json && outcome->ok) std::cout << to_json(outcome->result).dump() << "\n";
      return 128 + interrupted_by;
    }
  }
  if (!outcome->ok) {
    if (options.json) std::cout << to_json(outcome->error).dump() << "\n";
    std::cerr << "corral: " << outcome->error.describe() << "\n";
    return failure_status(outcome->error);
  }
  const auto& r = outcome->result;
  auto effective = effective_limits(rt.frozen_profile(), options.request);
  if (options.json) std::cout << to_json(r).dump() << "\n";
  else std::cerr << truncation_lines(r, effective.output_cap);
  for (auto& n : r.not_enforced) spdlog::debug("not enforced by tier {}: {}", r.tier, n);
  if (auto line = ending_line(r, &effective); !line.empty()) std::cerr << line << "\n";
  else if (full_filesystem && result_status(r) != 0) std::cerr << full_filesystem_line(effective) << "\n";
  return result_status(r);
}

} // namespace corral::cli
