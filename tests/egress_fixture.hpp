// What the egress tests share: a stub server on the host's 127.0.0.1 that records what
// reached it, and a landlock runtime whose profile is an allow-list with the test's own
// resolver (names mapped to addresses; no real DNS is asked).
#pragma once

#include <atomic>
#include <mutex>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "config/toml/toml_profile.hpp"
#include "tests/runtime_fixture.hpp"
#include "tiers/default_tiers.hpp"

namespace corral::testing {

// Accepts on 127.0.0.1:<port>; for each connection reads until a blank line (or 2 s, or
// 64 KiB), records the first bytes, answers a small HTTP response and closes. `hold`:
// keeps each connection open instead, until the peer closes (closed_count counts them).
class stub_server {
public:
  explicit stub_server(std::string body, bool hold = false) : body_(std::move(body)), hold_(hold) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    port_ = ntohs(bind_loopback(fd_).sin_port);
    REQUIRE(::listen(fd_, 256) == 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~stub_server() {
    stop_ = true;
    thread_.join();
    for (auto& t : workers_) t.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }
  int hits() const { return hits_; }
  int closed() const { return closed_; }
  std::vector<std::string> received() {
    std::lock_guard<std::mutex> g(mutex_);
    return received_;
  }

private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++hits_;
      workers_.emplace_back([this, c] { handle(c); });
    }
  }
  void handle(int c) {
    std::string got;
    char buf[4096];
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!stop_ && got.find("\r\n\r\n") == std::string::npos && got.size() < 65536 &&
           std::chrono::steady_clock::now() < deadline) {
      pollfd p{c, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
      if (static_cast<unsigned char>(got[0]) == 0x16) break;  // a ClientHello: enough seen
    }
    {
      std::lock_guard<std::mutex> g(mutex_);
      received_.push_back(got);
    }
    if (hold_) {
      while (!stop_) {
        pollfd p{c, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        if (::read(c, buf, sizeof buf) <= 0) break;
      }
      ++closed_;
    } else {
      std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body_.size()) +
                          "\r\nConnection: close\r\n\r\n" + body_;
      (void)!::write(c, reply.data(), reply.size());
    }
    ::close(c);
  }

  std::string body_;
  bool hold_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> hits_{0}, closed_{0};
  std::mutex mutex_;
  std::vector<std::string> received_;
  std::thread thread_;
  std::vector<std::thread> workers_;
};

// Empty when the landlock tier can run here, else why not (the test then skips).
inline std::string landlock_unavailable() {
  profile probe;
  auto tiers = build_default_tiers(probe, detect_kernel_features());
  auto st = tiers->find("landlock")->available();
  return st.available ? "" : st.reason;
}

// A landlock allow-list profile from [sandbox.network] TOML lines, with test names.
inline profile egress_profile(const std::string& network_toml,
                              std::map<std::string, std::vector<std::string>> names) {
  temp_dir project;
  auto p = load_profile_from_string("[sandbox.network]\nmode = \"allowlist\"\n" + network_toml, "egress.toml",
                                    project.path());
  if (!p) FAIL("profile: " << p.error().describe());
  p->limit.kill_grace = std::chrono::milliseconds(200);
  p->egress.test_resolver = std::move(names);
  return *p;
}

inline constexpr const char* kCurl = "/usr/bin/curl";
inline constexpr const char* kPython = "/usr/bin/python3";

inline bool have(const char* path) { return ::access(path, X_OK) == 0; }

// Runs the request (30 s bound: the default profile's ceiling); a refusal fails the test.
inline exec_result run_ok(test_runtime& rt, exec_request r) {
  r.timeout = std::chrono::seconds(30);
  auto res = rt.run(std::move(r));
  if (!res) FAIL("exec: " << res.error().describe());
  return *res;
}

inline const network_event* find_event(const exec_result& r, const std::string& host) {
  if (!r.network) return nullptr;
  for (auto& e : r.network->events)
    if (e.host == host) return &e;
  return nullptr;
}

} // namespace corral::testing
