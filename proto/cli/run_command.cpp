#include <iostream>
#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "actors/output_collector.hpp"
#include "actors/runtime.hpp"
#include "proto/cli/change_lines.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/ending.hpp"
#include "proto/cli/local_runtime.hpp"
#include "proto/cli/run_streaming.hpp"
#include "proto/cli/run_via_daemon.hpp"
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
    std::cout << run_usage();
    return 0;
  }
  auto options = parse_run_options(args);
  if (options)
    if (auto read = read_stdin_file(*options); !read) options = read.error();
  if (!options) return refuse_run_flags(options.error());
  configure_logging(options->flags.verbose);
  if (!options->flags.connect_socket.empty()) return run_via_daemon(*options);
  if (!options->nodes.empty()) return run_on_nodes(*options);

  auto rt = start_local_runtime(options->flags);
  if (!rt) return refuse(rt.error(), options->json);
  // The lease is removed before the exit; the runtime's threads end with the process.
  exit_after(**rt, run_streaming(**rt, *options));
}

} // namespace corral::cli
