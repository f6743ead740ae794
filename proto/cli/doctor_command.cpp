// corral doctor: what this machine can enforce, for a person (or --json for a program).
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "proto/cli/commands.hpp"
#include "proto/describe/machine_report.hpp"

namespace corral::cli {

namespace {

// Why `tier` cannot run here per the report, or nothing when it can.
std::optional<std::string> not_ready_because(const nlohmann::json& report, const std::string& tier) {
  for (auto& t : report["tiers"])
    if (t["name"] == tier) {
      if (t["available"].get<bool>() && !t.contains("refused")) return std::nullopt;
      return (t.contains("refused") ? t["refused"] : t["reason"]).get<std::string>();
    }
  return "is not a tier corral knows";
}

} // namespace

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
      std::cout << "usage: corral doctor [--json] [--config FILE] [--tier T]\n"
                   "       corral doctor --ready [--tier T] [--config FILE]\n"
                   "  --json    the report as JSON (what the daemon's capabilities method returns)\n"
                   "  --config FILE  the corral.toml whose tier is asked about (default: ./corral.toml)\n"
                   "  --tier T  ask about tier T instead of the profile's\n"
                   "  --ready   a readiness probe: prints the tier (the profile's, or T) and exits 0 when it\n"
                   "            can run here; otherwise says why and exits "
                << kExitRefused << "\n"
                   "  without --ready the whole report is printed, and the status is the same: 0 when the\n"
                   "  profile's tier (or T) can run here, "
                << kExitRefused << " when it cannot\n";
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
  if (tier.empty()) tier = report->value("profile_tier", std::string("landlock"));
  auto why_not = not_ready_because(*report, tier);
  if (ready) {
    if (why_not) std::cout << "not ready: the " << tier << " tier " << *why_not << "\n";
    else std::cout << "ready: " << tier << "\n";
    return why_not ? kExitRefused : 0;
  }
  if (json) std::cout << report->dump(2) << "\n";
  else std::cout << render_machine_report(*report);
  // The report is printed either way; the status says whether the profile's tier (the
  // one `corral run` would use) can run here, so scripts need not parse it.
  if (why_not) {
    std::cerr << "corral doctor: the profile's tier, " << tier << ", cannot run here (see above)\n";
    return kExitRefused;
  }
  return 0;
}

} // namespace corral::cli
