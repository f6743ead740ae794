#include <iostream>
#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "actors/output_collector.hpp"
#include "actors/runtime.hpp"
#include "proto/cli/change_lines.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/ending.hpp"
#include "proto/cli/grant_flags.hpp"
#include "proto/cli/local_runtime.hpp"
#include "proto/cli/run_streaming.hpp"
#include "proto/cli/run_options.hpp"
#include "proto/cli/run_result.hpp"
#include "config/write_all.hpp"
#include "proto/daemon/daemon_client.hpp"
#include "proto/jsonrpc/exec_params.hpp"
#include "proto/jsonrpc/result_json.hpp"

namespace corral::cli {

void configure_logging(bool verbose) {
  auto logger = spdlog::stderr_color_mt("corral");
  spdlog::set_default_logger(logger);
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
}

namespace {

// The live pieces are exactly what the result keeps; what was dropped is said on stderr.
void print_truncation_notices(const nlohmann::json& result) {
  for (std::string stream : {"stdout", "stderr"})
    if (result.value(stream + "_truncated", false))
      std::cerr << "corral: " << stream << " truncated; " << result.value(stream + "_dropped_bytes", 0ull)
                << " bytes dropped (the daemon's output cap)\n";
}

// --changes: what the program changed in its workspace, after its output, one line each.
void print_changes(const nlohmann::json& result) {
  for (auto& c : result["changes"]) std::cerr << change_line(c) << "\n";
  if (result.value("changes_truncated", false)) std::cerr << "corral: the list of changes was cut short\n";
  if (result.contains("changes_error")) std::cerr << "corral: no list of changes: " << result.value("changes_error", "") << "\n";
}

// --connect: the same output and exit status, with the daemon doing the work. Output
// streams as it arrives (all of it at the end with --json, as in-process).
int run_via_daemon(const run_options& options) {
  auto client = daemon_client::connect(options.flags.connect_socket);
  if (!client) return refuse(client.error(), options.json);
  daemon_client::output_fn live;
  if (!options.json)
    live = [](const std::string& stream, const std::string& bytes) {
      write_all(stream == "stderr" ? STDERR_FILENO : STDOUT_FILENO, bytes);
    };
  auto result = client->exec(options.request, live);
  if (!result) return refuse(result.error(), options.json);
  if (options.json) std::cout << result->dump() << "\n";
  else print_truncation_notices(*result);
  if (!options.json && result->contains("changes")) print_changes(*result);
  auto ending = ending_of(*result);
  if (auto line = ending_line(ending, nullptr); !line.empty()) std::cerr << line << "\n";
  return result_status(ending);
}

} // namespace

int refuse(const failure& f, bool json) {
  if (json) std::cout << to_json(f).dump() << "\n";
  std::cerr << "corral: " << f.describe() << "\n";
  return failure_status(f);
}

int print_result(const exec_result& result, bool json, nlohmann::json extra) {
  if (json) {
    auto j = to_json(result);
    for (auto& [k, v] : extra.items()) j[k] = v;
    std::cout << j.dump() << "\n";
  } else {
    write_all(STDOUT_FILENO, result.out.data);
    write_all(STDERR_FILENO, result.err.data);
    for (auto& n : result.not_enforced) spdlog::debug("not enforced by tier {}: {}", result.tier, n);
  }
  return result_status(result);
}

int run_command(const std::vector<std::string>& args) {
  if (asks_for_help(args)) {
    std::cout << run_usage() << kGrantsHeading << kGrantUsage;
    return 0;
  }
  auto options = parse_run_options(args);
  if (!options) {
    std::cerr << "corral: " << options.error().describe() << "\n" << run_usage() << kGrantsHeading << kGrantUsage;
    return kExitRefused;
  }
  configure_logging(options->flags.verbose);
  if (!options->flags.connect_socket.empty()) return run_via_daemon(*options);
  if (!options->nodes.empty()) return run_on_nodes(*options);

  auto rt = start_local_runtime(options->flags);
  if (!rt) return refuse(rt.error(), options->json);
  // The lease is removed before the exit; the runtime's threads end with the process.
  exit_after(**rt, run_streaming(**rt, *options));
}

} // namespace corral::cli
