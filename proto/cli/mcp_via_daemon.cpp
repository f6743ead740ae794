#include "proto/cli/mcp_via_daemon.hpp"
#include "proto/cli/network_notice.hpp"

#include <cerrno>
#include <iostream>
#include <optional>
#include <poll.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "proto/cli/commands.hpp"
#include "proto/cli/daemon_session.hpp"
#include "proto/cli/gate_report.hpp"
#include "config/write_all.hpp"
#include "proto/daemon/daemon_client.hpp"

namespace corral::cli {

namespace {

using nlohmann::json;

struct proxy_state {
  std::string session;
  bool stdout_open = true;
  bool want_close = false;
  std::optional<int> exit_status;

  void on_message(const json& m) {
    std::string method;
    const json* params = session_notification(m, session, method);
    if (!params) return;
    const auto& p = *params;
    if (method == "session.output") {
      std::string bytes = data_bytes(p);
      bytes.push_back('\n');
      if (stdout_open && !write_all(STDOUT_FILENO, bytes)) {
        stdout_open = false;  // the client is gone: nobody reads the server any more
        want_close = true;
      }
    } else if (method == "session.stderr") {
      write_all(STDERR_FILENO, data_bytes(p));
    } else if (method == "session.network") {
      if (auto line = refused_connection_line(network_event_of(p.value("event", json::object()))); !line.empty())
        std::cerr << line << "\n";
    } else if (method == "session.gate") {
      if (p.contains("warning") && p["warning"].is_string()) std::cerr << p["warning"].get<std::string>() << "\n";
      if (auto line = gate_refusal_line(p.value("decision", json())); !line.empty()) std::cerr << line << "\n";
    } else if (method == "session.refused") {
      spdlog::warn("corral mcp: a server message was not forwarded: {}", p.value("message", ""));
    } else if (method == "session.ended") {
      // The stderr went out live (session.stderr): its tail here would repeat it.
      if (p.contains("detail") && p["detail"].is_string()) std::cerr << "corral: " << p["detail"].get<std::string>() << "\n";
      exit_status = ended_exit_status(p).value_or(kExitRefused);
    }
  }
};

} // namespace

int mcp_via_daemon(const session_request& request, const std::string& socket_path) {
  json open = session_open_params("stdio", request);
  open["framing"] = "newline";
  open["forward_stderr"] = true;
  if (request.idle_timeout != kNoDeadline)
    open["idle_timeout"] = static_cast<double>(request.idle_timeout.count()) / 1000.0;
  proxy_state st;
  auto on_note = [&st](const json& m) { st.on_message(m); };
  auto opened = open_daemon_session(socket_path, open, on_note);
  if (!opened) return kExitRefused;
  st.session = opened->id;
  auto* client = &opened->client;

  std::string pending_input;
  bool stdin_open = true, close_sent = false;
  auto close_session = [&] {
    if (close_sent) return;
    close_sent = true;
    if (!pending_input.empty()) client->call("session.write", session_data_params(st.session, pending_input), on_note);
    pending_input.clear();
    client->call("session.close", {{"session", st.session}}, on_note);
  };
  while (!st.exit_status) {
    if ((!stdin_open || st.want_close) && !close_sent) {
      close_session();
      continue;
    }
    pollfd in{stdin_open ? STDIN_FILENO : -1, POLLIN, 0};
    auto got = opened->wait({&in, 1}, on_note);
    if (!got) {
      std::cerr << "corral: " << got.error().describe() << "\n";
      break;
    }
    if (*got) continue;
    if (stdin_open && in.revents) {
      char buf[65536];
      ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        stdin_open = false;
        continue;
      }
      pending_input.append(buf, static_cast<std::size_t>(n));
      for (auto nl = pending_input.find('\n'); nl != std::string::npos; nl = pending_input.find('\n')) {
        auto line = pending_input.substr(0, nl);
        pending_input.erase(0, nl + 1);
        if (line.size() > request.max_message_bytes) {
          spdlog::warn("corral mcp: a client message of {} bytes was not forwarded (the limit is {})", line.size(),
                       request.max_message_bytes);
          continue;
        }
        auto written = client->call("session.write", session_data_params(st.session, line), on_note);
        if (!written && written.error().kind != failure_kind::limit_exceeded) {
          spdlog::debug("corral mcp: the server did not take a message: {}", written.error().describe());
          stdin_open = false;
          break;
        }
      }
    }
  }
  return st.exit_status.value_or(kExitRefused);
}

} // namespace corral::cli
