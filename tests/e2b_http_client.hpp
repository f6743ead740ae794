// A blocking HTTP/1.1 client for the E2B gateway's tests: one request per connection
// (Connection: close), the response read to EOF, a chunked body decoded, and a Connect
// stream's envelopes split out. Every read is bounded.
#pragma once

#include <chrono>
#include <map>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "proto/e2b/e2b_json.hpp"
#include "proto/http/connect_envelope.hpp"

namespace corral::testing {

struct http_reply {
  int status = 0;  // 0: no answer (connect failed, or nothing within the bound)
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;                           // de-chunked
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
  // A Connect stream's messages, in order; the end-stream frame's last.
  std::vector<nlohmann::json> frames() const {
    std::vector<nlohmann::json> out;
    auto decoded = decode_envelopes(body, 64 << 20);
    if (decoded)
      for (auto& f : *decoded) out.push_back(nlohmann::json::parse(f.payload, nullptr, false));
    return out;
  }
};

class http_conn {
public:
  explicit http_conn(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~http_conn() { hang_up(); }
  http_conn(const http_conn&) = delete;
  http_conn& operator=(const http_conn&) = delete;

  void hang_up() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  bool send(const std::string& method, const std::string& target, const std::map<std::string, std::string>& headers,
            const std::string& body) {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
    for (auto& [k, v] : headers) req += k + ": " + v + "\r\n";
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    std::size_t off = 0;
    while (fd_ >= 0 && off < req.size()) {
      auto n = ::send(fd_, req.data() + off, req.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += std::size_t(n);
    }
    return fd_ >= 0;
  }

  // Reads to EOF (the server closes after the response) within `bound`.
  http_reply read_reply(std::chrono::milliseconds bound = std::chrono::seconds(30)) {
    read_until([](const std::string&) { return false; }, bound);
    return parse(raw_);
  }

  // Reads until what came so far holds `needle` (a stream's first event, say); false when
  // it did not within `bound`. What was read stays for read_reply.
  bool read_until_seen(const std::string& needle, std::chrono::milliseconds bound = std::chrono::seconds(20)) {
    return read_until([&](const std::string& raw) { return raw.find(needle) != std::string::npos; }, bound);
  }

private:
  template <class Done>
  bool read_until(Done done, std::chrono::milliseconds bound) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    char buf[65536];
    while (fd_ >= 0 && !done(raw_)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, int(left.count())) <= 0) return false;
      auto n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) return false;
      raw_.append(buf, std::size_t(n));
    }
    return fd_ >= 0;
  }

  static http_reply parse(const std::string& raw) {
    http_reply r;
    auto head_end = raw.find("\r\n\r\n");
    if (head_end == std::string::npos || raw.compare(0, 9, "HTTP/1.1 ") != 0) return r;
    r.status = std::stoi(raw.substr(9, 3));
    std::size_t pos = raw.find("\r\n") + 2;
    while (pos < head_end) {
      auto eol = raw.find("\r\n", pos);
      auto line = raw.substr(pos, eol - pos);
      auto colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (auto& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
      auto value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      r.headers[name] = value;
      pos = eol + 2;
    }
    std::string body = raw.substr(head_end + 4);
    if (r.headers["transfer-encoding"] != "chunked") {
      r.body = body;
      return r;
    }
    std::size_t at = 0;
    while (at < body.size()) {
      auto eol = body.find("\r\n", at);
      if (eol == std::string::npos) break;
      auto size = std::stoul(body.substr(at, eol - at), nullptr, 16);
      if (size == 0) break;
      r.body += body.substr(eol + 2, size);
      at = eol + 2 + size + 2;
    }
    return r;
  }

  int fd_ = -1;
  std::string raw_;  // what was read so far
};

// A loopback port nothing listens on now (a daemon binds it next; another process taking it
// first is possible and only fails that start, saying so).
inline std::uint16_t free_tcp_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// One whole call on a new connection.
inline http_reply http_call(std::uint16_t port, const std::string& method, const std::string& target,
                            const std::map<std::string, std::string>& headers = {}, const std::string& body = "",
                            std::chrono::milliseconds bound = std::chrono::seconds(30)) {
  http_conn c(port);
  if (!c.send(method, target, headers, body)) return {};
  return c.read_reply(bound);
}

} // namespace corral::testing
