// corral doctor: what this machine can enforce, for a person (or --json for a program).
#include <iostream>

#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "proto/cli/commands.hpp"
#include "proto/describe/machine_report.hpp"

namespace corral::cli {

int doctor_command(const std::vector<std::string>& args) {
  bool json = false;
  std::string config_path;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") json = true;
    else if (args[i] == "--config" && i + 1 < args.size()) config_path = args[++i];
    else if (args[i] == "--help" || args[i] == "-h") {
      std::cout << "usage: corral doctor [--json] [--config FILE]\n";
      return 0;
    } else {
      std::cerr << "corral doctor: unknown option " << args[i] << "\n";
      return kExitRefused;
    }
  }
  auto report = machine_report_for_cli(config_path);
  if (!report) {
    std::cerr << "corral doctor: " << report.error().describe() << "\n";
    return kExitRefused;
  }
  if (json) std::cout << report->dump(2) << "\n";
  else std::cout << render_machine_report(*report);
  return 0;
}

} // namespace corral::cli
