// corral e2b key add|ls|rm: the API keys `corral serve --e2b-listen` admits
// (proto/e2b/api_keys.hpp). A key is shown once, at add; only its digest is kept.
#include <iostream>

#include "config/toml/toml_profile.hpp"
#include "config/workspace_settings.hpp"
#include "proto/cli/commands.hpp"
#include "proto/cli/workspace_verbs.hpp"
#include "proto/e2b/api_keys.hpp"

namespace corral::cli {

namespace {

const char* const kE2bUsage = R"(usage: corral e2b key add [--name NAME] [--dir DIR] [--config FILE]
       corral e2b key ls [--dir DIR] [--config FILE]
       corral e2b key rm ID|NAME [--dir DIR] [--config FILE]

The API keys of the E2B-compatible API (`corral serve --e2b-listen HOST:PORT`). `add` prints
the new key once (E2B_API_KEY for the SDK); corral keeps only its SHA-256. Each key owns the
sandboxes made with it: no other key sees or touches them. A running daemon reads the list
again when it changes. Removing a key refuses its calls at once; its sandboxes end at their
timeout.

  --dir DIR      where the keys live (default: beside the workspaces directory, in e2b/;
                 $CORRAL_E2B_DIR overrides it); the daemon's --e2b-dir must match
  --config FILE  the corral.toml whose [sandbox.workspaces] dir places the default
)";

} // namespace

int e2b_command(const std::vector<std::string>& args) {
  // Help asked for goes to stdout, as every command's does; a usage error to stderr.
  auto asked_help = [&](std::size_t at) { return args.size() > at && (args[at] == "--help" || args[at] == "-h"); };
  if (asked_help(0) || (args.size() >= 1 && args[0] == "key" && asked_help(1))) {
    std::cout << kE2bUsage;
    return 0;
  }
  if (args.size() < 2 || args[0] != "key") {
    std::cerr << kE2bUsage;
    return 2;
  }
  const auto& verb = args[1];
  std::string dir, name, config_path, target;
  for (std::size_t i = 2; i < args.size(); ++i) {
    const auto& a = args[i];
    bool has_value = i + 1 < args.size();
    if (a == "--dir" && has_value) dir = args[++i];
    else if (a == "--name" && has_value) name = args[++i];
    else if (a == "--config" && has_value) config_path = args[++i];
    else if (verb == "rm" && target.empty() && a[0] != '-') target = a;
    else {
      std::cerr << "corral e2b: bad or incomplete option " << a << "\n" << kE2bUsage;
      return kExitRefused;
    }
  }
  if (dir.empty()) {
    auto prof = load_profile_here(config_path);
    if (!prof) {
      std::cerr << "corral e2b: " << prof.error().describe() << "\n";
      return kExitRefused;
    }
    dir = default_e2b_dir(workspaces_dir(prof->workspaces));
  }
  if (verb == "add") {
    auto issued = add_key(dir, name);
    if (!issued) {
      std::cerr << "corral e2b: " << issued.error().describe() << "\n";
      return kExitRefused;
    }
    std::cerr << "corral e2b: key " << issued->record.id << (name.empty() ? "" : " (" + name + ")")
              << " added to " << dir << "; it is shown only now:\n";
    std::cout << issued->key << "\n";
    return 0;
  }
  if (verb == "ls") {
    auto keys = read_keys(dir);
    if (!keys) {
      std::cerr << "corral e2b: " << keys.error().describe() << "\n";
      return kExitRefused;
    }
    std::cout << "ID               NAME                 CREATED\n";
    for (auto& k : *keys) {
      std::string id = k.id, n = k.name.empty() ? "-" : k.name;
      id.resize(std::max<std::size_t>(id.size(), 16), ' ');
      n.resize(std::max<std::size_t>(n.size(), 20), ' ');
      std::cout << id << " " << n << " " << time_text(k.created_at) << "\n";
    }
    return 0;
  }
  if (verb == "rm") {
    if (target.empty()) {
      std::cerr << "corral e2b: key rm needs a key's id or name\n";
      return kExitRefused;
    }
    auto removed = remove_key(dir, target);
    if (!removed) {
      std::cerr << "corral e2b: " << removed.error().describe() << "\n";
      return removed.error().kind == failure_kind::not_found ? kExitNotFound : kExitRefused;
    }
    std::cerr << "corral e2b: key " << removed->id << " removed\n";
    return 0;
  }
  std::cerr << "corral e2b: unknown verb '" << verb << "'\n" << kE2bUsage;
  return 2;
}

} // namespace corral::cli
