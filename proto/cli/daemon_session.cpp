#include "proto/cli/daemon_session.hpp"

#include <iostream>

namespace corral::cli {

status connect_excludes_local_options(const std::string& config_path, bool allow_host) {
  const char* given = !config_path.empty() ? "--config" : allow_host ? "--allow-host" : nullptr;
  if (!given) return ok();
  return make_failure(failure_kind::invalid_request,
                      std::string(given) + " has no effect with --connect: the daemon's own profile and opt-ins apply "
                                           "(give them to `corral serve` instead)");
}

std::optional<daemon_session> open_daemon_session(const std::string& socket_path, const nlohmann::json& params,
                                                  const daemon_client::notification_fn& on_note) {
  auto client = daemon_client::connect(socket_path);
  if (!client) {
    std::cerr << "corral: " << client.error().describe() << "\n";
    return std::nullopt;
  }
  auto opened = client->call("session.open", params, on_note);
  if (!opened) {
    std::cerr << "corral: " << opened.error().describe() << "\n";
    return std::nullopt;
  }
  auto id = opened->value("session", "");
  return daemon_session{std::move(*client), std::move(id)};
}

std::optional<int> ended_exit_status(const nlohmann::json& params) {
  if (auto sig = params.find("signal"); sig != params.end() && sig->is_number_integer()) return 128 + sig->get<int>();
  if (auto code = params.find("exit_code"); code != params.end() && code->is_number_integer()) return code->get<int>();
  return std::nullopt;
}

} // namespace corral::cli
