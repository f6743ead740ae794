#include <iostream>
#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "actors/output_collector.hpp"
#include "actors/runtime.hpp"
#include "config/toml_profile.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/allow_net.hpp"
#include "proto/cli/run_options.hpp"
#include "proto/cli/write_all.hpp"
#include "proto/daemon_client.hpp"
#include "proto/exec_params.hpp"
#include "proto/node_pool.hpp"
#include "proto/result_json.hpp"

namespace corral::cli {

void configure_logging(bool verbose) {
  auto logger = spdlog::stderr_color_mt("corral");
  spdlog::set_default_logger(logger);
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
}

namespace {

int refuse(const failure& f, bool json) {
  if (json) std::cout << to_json(f).dump() << "\n";
  std::cerr << "corral: " << f.describe() << "\n";
  return f.kind == failure_kind::spawn_failed && f.message.find("not found") != std::string::npos
             ? kExitNotFound
             : kExitRefused;
}


// The live pieces are what the result keeps, without the notice the collector appends when
// output was dropped: that notice still goes where the in-process path prints it.
void print_truncation_notices(const nlohmann::json& result) {
  for (std::string stream : {"stdout", "stderr"}) {
    if (!result.value(stream + "_truncated", false)) continue;
    auto text = result.value(stream, std::string());
    if (auto raw = result.find(stream + "_base64"); raw != result.end() && raw->is_string())
      if (auto bytes = base64_decode(raw->get<std::string>())) text = *bytes;
    auto at = text.rfind(kTruncationNotice);
    if (at != std::string::npos) write_all(stream == "stderr" ? STDERR_FILENO : STDOUT_FILENO, text.substr(at));
  }
}

// --connect: the same output and exit status, with the daemon doing the work. Output
// streams as it arrives (all of it at the end with --json, as in-process).
int run_via_daemon(const run_options& options) {
  auto client = daemon_client::connect(options.connect_socket);
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
  if (result->value("timed_out", false)) return kExitTimeout;
  if (auto sig = result->find("signal"); sig != result->end() && sig->is_number_integer()) return 128 + sig->get<int>();
  if (auto code = result->find("exit_code"); code != result->end() && code->is_number_integer()) return code->get<int>();
  return kExitRefused;
}

int print_result(const exec_result& result, bool json, nlohmann::json extra = nlohmann::json::object()) {
  if (json) {
    auto j = to_json(result);
    for (auto& [k, v] : extra.items()) j[k] = v;
    std::cout << j.dump() << "\n";
  } else {
    write_all(STDOUT_FILENO, result.out.data);
    write_all(STDERR_FILENO, result.err.data);
    for (auto& n : result.not_enforced) spdlog::debug("not enforced by tier {}: {}", result.tier, n);
  }
  if (result.timed_out) return kExitTimeout;
  if (result.term_signal) return 128 + *result.term_signal;
  return result.exit_code.value_or(kExitRefused);
}

// --nodes: the least-loaded node runs it; which node and its boundary go with --json.
int run_on_nodes(const run_options& options) {
  node_pool_options po;
  po.nodes = options.nodes;
  po.tls = options.node_credentials;
  auto pool = node_pool::connect(po);
  if (!pool) return refuse(pool.error(), options.json);
  auto placed = (*pool)->exec(options.request);
  if (!placed) return refuse(placed.error(), options.json);
  spdlog::debug("ran on node {} ({})", placed->node, placed->digest);
  nlohmann::json extra{{"node", placed->node}};
  extra["node_descriptor"] = nlohmann::json::parse(placed->descriptor, nullptr, false);
  return print_result(placed->result, options.json, extra);
}

} // namespace

int run_command(const std::vector<std::string>& args) {
  for (auto& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      std::cout << kRunUsage;
      return 0;
    }
  }
  auto options = parse_run_options(args);
  if (!options) {
    std::cerr << "corral: " << options.error().describe() << "\n" << kRunUsage;
    return kExitRefused;
  }
  configure_logging(options->verbose);
  if (!options->connect_socket.empty()) return run_via_daemon(*options);
  if (!options->nodes.empty()) return run_on_nodes(*options);

  char cwd[4096];
  auto prof = load_profile(options->config_path, ::getcwd(cwd, sizeof cwd) ? cwd : ".");
  if (!prof) return refuse(prof.error(), options->json);
  if (auto s = apply_allow_net(*prof, options->allow_net); !s) return refuse(s.error(), options->json);

  runtime_options ro;
  ro.prof = std::move(*prof);
  ro.warm_jails = 0;  // one request: a jail armed ahead would only compete with it
  ro.allow_host = options->allow_host;
  auto rt = runtime::start(std::move(ro));
  if (!rt) return refuse(rt.error(), options->json);

  auto result = (*rt)->exec(options->request);
  if (!result) return refuse(result.error(), options->json);
  return print_result(*result, options->json);
}

} // namespace corral::cli
