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
#include "proto/cli/detach_keys.hpp"
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
  bool writer = true;
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
    } else if (method == "session.writer_lost") {
      writer = false;
      std::string note = "\r\n[corral: another client took over typing; this one only watches now (ctrl-p ctrl-q leaves)]\r\n";
      write_all(STDERR_FILENO, note);
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

// A terminal a workspace keeps, attached again; when the workspace has none and the
// choice allows, a new one. Says why not on stderr.
std::optional<daemon_session> attach_or_open(const terminal_request& r, const std::string& socket_path,
                                             const terminal_choice& choice, const daemon_client::notification_fn& on_note) {
  auto client = daemon_client::connect(socket_path);
  if (!client) {
    std::cerr << "corral: " << client.error().describe() << "\n";
    return std::nullopt;
  }
  json p{{"workspace", r.workspace}, {"writer", !choice.view}, {"take_over", !choice.view}};
  if (!choice.terminal.empty()) p["terminal"] = choice.terminal;
  auto got = client->call("workspace.attach", p, on_note);
  if (!got && choice.open_if_none && choice.terminal.empty() && got.error().kind == failure_kind::not_found) {
    // Not found: the workspace has no terminal, or there is no such workspace (then the
    // open says so).
    auto kept = client->call("workspace.terminals", {{"workspace", r.workspace}}, on_note);
    if (!kept || kept->value("terminals", json::array()).empty()) got = client->call("session.open", open_params(r), on_note);
  }
  if (!got) {
    std::cerr << "corral: " << got.error().describe() << "\n";
    return std::nullopt;
  }
  auto id = got->value("session", "");
  return daemon_session{std::move(*client), std::move(id), std::move(*got)};
}

// The session runs in the daemon: losing the connection loses the terminal (the daemon
// cancels a disconnected client's sessions), so it ends corral as a refusal would.
int daemon_gone(const std::string& socket_path, const failure& why) {
  restore_tty();
  std::cerr << "\r\ncorral: lost the corral daemon at " << socket_path << " during the shell (" << why.message
            << "); the terminal is gone with it\n";
  return kExitRefused;
}

// ctrl-p ctrl-q: the terminal goes on in its workspace; this client ends, saying how to
// come back.
int detached(daemon_client& client, const std::string& session, const std::string& terminal, const std::string& workspace) {
  auto r = client.call("session.detach", {{"session", session}});
  restore_tty();
  if (!r) {
    std::cerr << "\r\ncorral: session.detach: " << r.error().describe() << "\n";
    return kExitRefused;
  }
  std::cerr << "\r\ncorral: detached; terminal " << terminal << " goes on in workspace " << workspace
            << " (corral shell --connect SOCKET --workspace " << workspace << " attaches again)\n";
  return 0;
}

} // namespace

int shell_via_daemon(const terminal_request& request, const std::string& socket_path, const terminal_choice& choice) {
  terminal_state st;
  auto on_note = [&st](const json& m) { st.on_message(m); };
  auto opened = choice.attach ? attach_or_open(request, socket_path, choice, on_note)
                              : open_daemon_session(socket_path, open_params(request), on_note);
  if (!opened) return kExitRefused;
  st.session = opened->id;
  st.writer = opened->opened.value("writer", true);
  // A workspace's terminal lives on without this client: ctrl-p ctrl-q leaves it.
  std::string kept = opened->opened.value("terminal", "");
  std::string workspace = opened->opened.value("workspace", "");
  detach_keys keys;
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
  // Attached again, the terminal may have another size than this window.
  std::uint16_t rows = 0, cols = 0;
  if (choice.attach && st.writer && local_size(rows, cols))
    if (auto end = call("session.resize", {{"session", st.session}, {"rows", rows}, {"cols", cols}})) return *end;
  while (!st.exit_status) {
    pollfd local[2] = {{stdin_open ? STDIN_FILENO : -1, POLLIN, 0}, {winch.fd(), POLLIN, 0}};
    auto got = opened->wait(local, on_note);
    if (!got) return daemon_gone(socket_path, got.error());
    if (*got) continue;
    if (local[1].revents) {
      winch.drain();
      if (st.writer && local_size(rows, cols))
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
      if (!kept.empty()) {
        bool leave = false;
        bytes = keys.pass(bytes, leave);
        if (leave) return detached(*client, st.session, kept, workspace);
      }
      if (!st.writer) continue;  // a viewer's keys go nowhere but to the detach sequence
      if (bytes.empty()) continue;
      if (auto end = call("session.write", session_data_params(st.session, bytes))) return *end;
    }
  }
  restore_tty();
  for (auto& line : st.refused) std::cerr << line << "\n";
  if (!st.failure_detail.empty()) std::cerr << "corral: the terminal failed: " << st.failure_detail << "\n";
  return *st.exit_status;
}

} // namespace corral::cli
