#include "proto/cli/command_flags.hpp"

namespace corral::cli {

bool asks_for_help(const std::vector<std::string>& args) {
  for (auto& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

bool is_command_value_flag(const std::string& flag) {
  return flag == "--tier" || flag == "--config" || flag == "--connect" || flag == "--allow-net" || flag == "--workspace";
}

status workspace_needs_connect(const command_flags& f) {
  if (f.workspace.empty() || !f.connect_socket.empty()) return ok();
  return make_failure(failure_kind::invalid_request,
                      "--workspace needs --connect: workspaces live in the daemon (start `corral serve`)");
}

expected<bool> take_command_flag(const std::vector<std::string>& args, std::size_t& i, command_flags& f) {
  const auto& a = args[i];
  if (auto limit = parse_limit_flag(args, i, f.limits); !limit || *limit) return limit;
  if (auto grant = take_grant_flag(args, i, f.grants); !grant || *grant) return grant;
  if (a == "--allow-host") return f.allow_host = true;
  if (a == "-v") return f.verbose = true;
  if (!is_command_value_flag(a)) return false;
  if (i + 1 >= args.size()) return make_failure(failure_kind::invalid_request, a + " needs a value");
  const auto& v = args[++i];
  if (a == "--tier") f.tier = v;
  else if (a == "--config") f.config_path = v;
  else if (a == "--connect") f.connect_socket = v;
  else if (a == "--workspace") f.workspace = v;
  else {
    auto entries = parse_allow_net(v);
    if (!entries) return entries.error();
    f.allow_net.insert(f.allow_net.end(), entries->begin(), entries->end());
  }
  return true;
}

} // namespace corral::cli
