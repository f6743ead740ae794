#include "proto/cli/workspace_verbs.hpp"

#include <ctime>

#include "proto/cli/commands.hpp"
#include "proto/daemon/default_socket.hpp"

namespace corral::cli {

int refuse(const failure& f) {
  std::cerr << "corral workspace: " << f.describe() << "\n";
  return kExitRefused;
}

int usage_error(const std::string& what) {
  std::cerr << "corral workspace: " << what << "\n" << workspace_usage();
  return kExitRefused;
}

ws_args split_common(const std::vector<std::string>& args) {
  ws_args out;
  bool program = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (program) {
      out.rest.push_back(a);
      continue;
    }
    if (a == "--") program = true;
    if (a == "--connect" && i + 1 < args.size()) {
      out.socket = args[++i];
      continue;
    }
    if (a == "--json") {
      out.json = true;
      continue;
    }
    out.rest.push_back(a);
  }
  if (out.socket.empty()) out.socket = default_socket_path();
  return out;
}

expected<daemon_client> connect(const ws_args& a) {
  auto c = daemon_client::connect(a.socket);
  if (!c)
    return make_failure(c.error().kind, c.error().message + "; workspaces live in the daemon: start `corral serve` "
                                                            "(or name its socket with --connect)");
  return c;
}

std::string time_text(std::int64_t unix_seconds) {
  std::time_t t = unix_seconds;
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

} // namespace corral::cli
