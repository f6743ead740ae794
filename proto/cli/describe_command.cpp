// corral describe: the profile's descriptor (canonical JSON and its digest), as an audit
// log would record it for a run started here.
#include <iostream>
#include <unistd.h>

#include "config/toml/toml_profile.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/grant_flags.hpp"
#include "proto/describe/descriptor.hpp"
#include "tiers/default_tiers.hpp"

namespace corral::cli {

int describe_command(const std::vector<std::string>& args) {
  std::string config_path;
  boundary_grants grants;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto grant = take_grant_flag(args, i, grants);
    if (!grant) {
      std::cerr << "corral describe: " << grant.error().message << "\n";
      return kExitRefused;
    }
    if (*grant) continue;
    if (args[i] == "--config" && i + 1 < args.size()) {
      config_path = args[++i];
    } else if (args[i] == "--help" || args[i] == "-h") {
      std::cout << "usage: corral describe [--config FILE] [grants]\n\nThe descriptor of the profile a run with the "
                   "same flags would use.\n"
                << kGrantsHeading << kGrantUsage;
      return 0;
    } else {
      std::cerr << "corral describe: unknown option " << args[i] << "\n";
      return kExitRefused;
    }
  }
  auto prof = load_profile_here(config_path, grants);
  if (!prof) {
    std::cerr << "corral describe: " << prof.error().describe() << "\n";
    return kExitRefused;
  }
  auto features = detect_kernel_features();
  auto tiers = build_default_tiers(*prof, features);
  std::cout << profile_descriptor(*prof, features, *tiers).dump(2) << "\n";
  return 0;
}

} // namespace corral::cli
