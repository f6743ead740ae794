// `corral serve` as a child process on a temp socket, and a raw JSON-RPC line client for
// it: the daemon tests and the workspace-over-daemon tests speak to it from outside.
#pragma once

#include <chrono>
#include <csignal>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/runtime_fixture.hpp"
#include "tests/serve_child.hpp"

namespace corral::testing {

using nlohmann::json;
inline int connect_to(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{20, 0};  // a test must fail, not hang
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

inline bool pid_alive(pid_t pid) { return ::kill(pid, 0) == 0; }

struct line_client {
  int fd = -1;
  std::string buf;
  explicit line_client(const std::string& path) : fd(connect_to(path)) { REQUIRE(fd >= 0); }
  ~line_client() { close(); }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  void send(const std::string& line) {
    std::string l = line + "\n";
    std::size_t done = 0;
    while (done < l.size()) {
      ssize_t n = ::send(fd, l.data() + done, l.size() - done, MSG_NOSIGNAL);
      REQUIRE(n > 0);
      done += static_cast<std::size_t>(n);
    }
  }
  void call(int id, const std::string& method, const json& params = json::object()) {
    send(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump());
  }
  // The next message, or null at EOF / timeout.
  json next() {
    for (;;) {
      auto nl = buf.find('\n');
      if (nl != std::string::npos) {
        auto line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        return json::parse(line);
      }
      char chunk[65536];
      ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n <= 0) return nullptr;
      buf.append(chunk, static_cast<std::size_t>(n));
    }
  }
  // The reply to `id`, collecting notifications on the way.
  json reply(const json& id, std::vector<json>* notes = nullptr) {
    for (;;) {
      auto m = next();
      if (m.is_null()) return m;
      if (m.contains("method")) {
        if (notes) notes->push_back(m);
        continue;
      }
      if (m["id"] == id) return m;
    }
  }
};

struct daemon_process {
  testing::temp_dir dir{"corral-daemon-"};
  std::string socket = dir / "corral.sock";
  pid_t pid = -1;

  explicit daemon_process(std::vector<std::string> extra = {}) { start(extra); }
  // SIGTERM first: a daemon that shuts down finishes its leases, while a SIGKILLed one
  // leaves its cgroups for a sweep that never comes once this temp state dir is removed.
  ~daemon_process() { stop_gracefully(); }

  void start(std::vector<std::string> extra = {}) {
    pid = fork_corral_serve(dir, socket, extra, host_opt_in::cleared);
    REQUIRE(pid >= 0);
    REQUIRE(eventually([&] {
      int fd = connect_to(socket);
      if (fd >= 0) ::close(fd);
      return fd >= 0;
    }, std::chrono::seconds(10)));
  }
  void stop_gracefully() {
    if (pid <= 0) return;
    ::kill(pid, SIGTERM);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    int status = 0;
    while (std::chrono::steady_clock::now() < until) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop(SIGKILL);
  }
  int stop(int sig) {
    if (pid <= 0) return -1;
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
};

inline json error_of(const json& reply) {
  REQUIRE(reply.contains("error"));
  return reply["error"];
}

} // namespace corral::testing
