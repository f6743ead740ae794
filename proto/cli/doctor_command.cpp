// corral doctor: what this machine can enforce, for a person (or --json for a program).
#include <iostream>

#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "proto/cli/commands.hpp"
#include "proto/describe/machine_report.hpp"

namespace corral::cli {

int doctor_command(const std::vector<std::string>& args) {
  bool json = false;
  bool ready = false;
  std::string tier;
  std::string config_path;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") json = true;
    else if (args[i] == "--ready") ready = true;
    else if (args[i] == "--tier" && i + 1 < args.size()) tier = args[++i];
    else if (args[i] == "--config" && i + 1 < args.size()) config_path = args[++i];
    else if (args[i] == "--help" || args[i] == "-h") {
      std::cout << "usage: corral doctor [--json] [--config FILE]\n"
                   "       corral doctor --ready [--tier T] [--config FILE]\n"
                   "  --ready   a readiness probe: prints the tier (the profile's, or T) and exits 0 when it\n"
                   "            can run here; otherwise says why and exits "
                << kExitRefused << "\n";
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
  if (ready) {
    if (tier.empty()) tier = report->value("profile_tier", std::string("landlock"));
    for (auto& t : (*report)["tiers"])
      if (t["name"] == tier) {
        bool ok = t["available"].get<bool>() && !t.contains("refused");
        if (ok) std::cout << "ready: " << tier << "\n";
        else
          std::cout << "not ready: the " << tier << " tier "
                    << (t.contains("refused") ? t["refused"] : t["reason"]).get<std::string>() << "\n";
        return ok ? 0 : kExitRefused;
      }
    std::cout << "not ready: no tier named " << tier << "\n";
    return kExitRefused;
  }
  if (json) std::cout << report->dump(2) << "\n";
  else std::cout << render_machine_report(*report);
  return 0;
}

} // namespace corral::cli
