#include "proto/cli/run_via_daemon.hpp"

#include <iostream>
#include <unistd.h>

#include "config/write_all.hpp"
#include "proto/cli/change_lines.hpp"
#include "proto/cli/ending.hpp"
#include "proto/daemon/daemon_client.hpp"

namespace corral::cli {

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

} // namespace

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

} // namespace corral::cli
