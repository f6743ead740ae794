#include "proto/cli/shell_via_daemon.hpp"
#include "proto/cli/network_notice.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>
#include <poll.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "proto/cli/commands.hpp"
#include "proto/cli/daemon_session.hpp"
#include "proto/cli/local_tty.hpp"
#include "config/write_all.hpp"
#include "proto/daemon/daemon_client.hpp"

namespace corral::cli {

namespace {

using nlohmann::json;

json open_params(const terminal_request& r) {
  json p = session_open_params("terminal", r);
  p["rows"] = r.rows;
  p["cols"] = r.cols;
  if (r.lifetime != kNoDeadline) p["lifetime"] = static_cast<double>(r.lifetime.count()) / 1000.0;
  return p;
}

struct terminal_state {
  std::string session;
  std::optional<int> exit_status;
  std::string failure_detail;
  std::vector<std::string> refused;  // said after the terminal is restored

  void on_message(const json& m) {
    std::string method;
    const json* p = session_notification(m, session, method);
    if (!p) return;
    if (method == "session.output") {
      write_all(STDOUT_FILENO, data_bytes(*p));
    } else if (method == "session.network") {
      if (auto line = refused_connection_line(network_event_of(p->value("event", json::object())));
          !line.empty() && refused.size() < kMaxNetworkEvents)
        refused.push_back(std::move(line));
    } else if (method == "session.ended") {
      if (p->value("reason", "") == "failed") {
        failure_detail = p->value("detail", std::string("no detail given"));
        exit_status = kExitRefused;
      } else {
        exit_status = ended_exit_status(*p).value_or(0);
      }
    }
  }
};

// The session runs in the daemon: losing the connection loses the terminal (the daemon
// cancels a disconnected client's sessions), so it ends corral as a refusal would.
int daemon_gone(const std::string& socket_path, const failure& why) {
  restore_tty();
  std::cerr << "\r\ncorral: lost the corral daemon at " << socket_path << " during the shell (" << why.message
            << "); the terminal is gone with it\n";
  return kExitRefused;
}

} // namespace

int shell_via_daemon(const terminal_request& request, const std::string& socket_path) {
  terminal_state st;
  auto on_note = [&st](const json& m) { st.on_message(m); };
  auto opened = open_daemon_session(socket_path, open_params(request), on_note);
  if (!opened) return kExitRefused;
  st.session = opened->id;
  auto* client = &opened->client;

  winch_pipe winch;
  if (!winch.ok()) {
    std::cerr << "corral: pipe2: " << std::strerror(errno) << "\n";
    return kExitRefused;  // the daemon ends the session when this connection closes
  }
  raw_mode raw;
  // A failed call either raced the session's end (session.ended came before the error) or
  // lost the daemon.
  auto call = [&](const std::string& method, const json& params) -> std::optional<int> {
    auto r = client->call(method, params, on_note);
    if (r || st.exit_status) return std::nullopt;
    if (r.error().kind == failure_kind::internal) return daemon_gone(socket_path, r.error());
    restore_tty();
    std::cerr << "\r\ncorral: the daemon refused " << method << ": " << r.error().describe() << "\n";
    return kExitRefused;
  };
  bool stdin_open = true;
  while (!st.exit_status) {
    pollfd local[2] = {{stdin_open ? STDIN_FILENO : -1, POLLIN, 0}, {winch.fd(), POLLIN, 0}};
    auto got = opened->wait(local, on_note);
    if (!got) return daemon_gone(socket_path, got.error());
    if (*got) continue;
    if (local[1].revents) {
      winch.drain();
      std::uint16_t rows = 0, cols = 0;
      if (local_size(rows, cols))
        if (auto end = call("session.resize", {{"session", st.session}, {"rows", rows}, {"cols", cols}})) return *end;
    }
    if (local[0].revents) {
      char buf[4096];
      ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      std::string bytes;
      if (n <= 0) {
        // Not a terminal, and its input ended: end-of-file for the program, as ^D is.
        stdin_open = false;
        bytes = "\x04";
      } else {
        bytes.assign(buf, static_cast<std::size_t>(n));
      }
      if (auto end = call("session.write", session_data_params(st.session, bytes))) return *end;
    }
  }
  restore_tty();
  for (auto& line : st.refused) std::cerr << line << "\n";
  if (!st.failure_detail.empty()) std::cerr << "corral: the terminal failed: " << st.failure_detail << "\n";
  return *st.exit_status;
}

} // namespace corral::cli
