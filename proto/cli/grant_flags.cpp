#include "proto/cli/grant_flags.hpp"

#include <cstdlib>

namespace corral::cli {

const char* const kGrantsHeading =
    "\ngrants (added to the profile for this invocation; with --connect only --env and --cwd apply):\n";

const char* const kGrantUsage = R"(  --ro HOST[:INSIDE]  grant a file or directory read-only (repeatable; INSIDE defaults to
                      HOST's absolute path). A .git inside stays read-only, the config
                      file and sandbox.protected_paths entries are hidden
  --rw HOST[:INSIDE]  grant a file or directory writable (repeatable)
  --here, --here=ro   grant this directory writable (read-only) at the same path inside,
                      and start the program there
  --cwd INSIDE        start the program in INSIDE (default: the scratch dir /work); with
                      --connect, relative to the daemon's working dir (a workspace: /work)
  --env KEY=VALUE     set a variable (repeatable); --env KEY copies this shell's value.
                      Nothing else of this shell's environment passes
  --net none|host     the network: none (default) or the host's
)";

namespace {

failure bad(const std::string& why) { return make_failure(failure_kind::invalid_request, why); }

} // namespace

expected<bool> take_grant_flag(const std::vector<std::string>& args, std::size_t& i, boundary_grants& g) {
  const auto& a = args[i];
  if (a == "--here") return g.here = here_mode::writable, true;
  if (a == "--here=ro") return g.here = here_mode::read_only, true;
  if (a == "--here=rw") return g.here = here_mode::writable, true;
  if (a != "--ro" && a != "--rw" && a != "--env" && a != "--net" && a != "--cwd") return false;
  if (i + 1 >= args.size()) return bad(a + " needs a value");
  const auto& v = args[++i];
  if (a == "--ro") g.read_only.push_back(v);
  else if (a == "--rw") g.writable.push_back(v);
  else if (a == "--cwd") g.working_dir = v;
  else if (a == "--net") {
    if (v == "none") g.network = network_mode::none;
    else if (v == "host") g.network = network_mode::host;
    else return bad("--net takes none or host, not '" + v + "'");
  } else {
    auto eq = v.find('=');
    auto key = v.substr(0, eq);
    if (key.empty()) return bad("--env takes KEY=VALUE or KEY, not '" + v + "'");
    if (eq != std::string::npos) {
      g.env[key] = v.substr(eq + 1);
    } else if (const char* value = std::getenv(key.c_str())) {
      g.env[key] = value;
    } else {
      return bad("--env " + key + ": this shell has no variable " + key + " to pass; set it, or give --env " + key +
                 "=VALUE");
    }
  }
  return true;
}

status connect_excludes_grants(const boundary_grants& g) {
  if (!g.shapes_boundary()) return ok();
  return bad("--ro, --rw, --here and --net have no effect with --connect: the daemon's own profile "
             "applies (give its roots to `corral serve` through its corral.toml instead)");
}

} // namespace corral::cli
