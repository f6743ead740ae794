#include "proto/cli/daemon_session.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>
#include <vector>

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
  return daemon_session{std::move(*client), std::move(id), std::move(*opened)};
}

expected<bool> daemon_session::wait(std::span<pollfd> local, const daemon_client::notification_fn& on_message) {
  for (;;) {
    if (client.has_buffered_message()) break;
    std::vector<pollfd> fds{{client.fd(), POLLIN, 0}};
    fds.insert(fds.end(), local.begin(), local.end());
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return make_failure(failure_kind::internal, std::string("poll: ") + std::strerror(errno));
    }
    for (std::size_t i = 0; i < local.size(); ++i) local[i].revents = fds[i + 1].revents;
    if (fds[0].revents) break;
    return false;
  }
  auto m = client.next_message();
  if (!m) return m.error();
  on_message(*m);
  return true;
}

const nlohmann::json* session_notification(const nlohmann::json& m, const std::string& id, std::string& method) {
  auto p = m.find("params");
  if (p == m.end() || !p->is_object() || p->value("session", "") != id) return nullptr;
  method = m.value("method", "");
  return &*p;
}

std::optional<int> ended_exit_status(const nlohmann::json& params) {
  if (auto sig = params.find("signal"); sig != params.end() && sig->is_number_integer()) return 128 + sig->get<int>();
  if (auto code = params.find("exit_code"); code != params.end() && code->is_number_integer()) return code->get<int>();
  return std::nullopt;
}

} // namespace corral::cli
