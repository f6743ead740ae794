#include "proto/daemon/daemon_client.hpp"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/jsonrpc/exec_params.hpp"
#include "proto/jsonrpc/jsonrpc.hpp"
#include "proto/jsonrpc/result_json.hpp"

namespace corral {

namespace {

status write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_failure(failure_kind::internal, std::string("writing to the daemon: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  return ok();
}

} // namespace

expected<daemon_client> daemon_client::connect(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path)
    return make_failure(failure_kind::invalid_request, "the socket path " + path + " is too long");
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_failure(failure_kind::internal, std::string("socket: ") + std::strerror(errno));
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0) {
    int e = errno;
    ::close(fd);
    return make_failure(failure_kind::internal, "connecting to the corral daemon at " + path + ": " + std::strerror(e) +
                                                    " (is `corral serve` running there?)");
  }
  return daemon_client(fd);
}

daemon_client::daemon_client(daemon_client&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), next_id_(other.next_id_), buffer_(std::move(other.buffer_)) {}

daemon_client::~daemon_client() {
  if (fd_ >= 0) ::close(fd_);
}

expected<std::string> daemon_client::read_line() {
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      auto line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    char chunk[65536];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return make_failure(failure_kind::internal, "the daemon closed the connection");
    if (n < 0) return make_failure(failure_kind::internal, std::string("reading from the daemon: ") + std::strerror(errno));
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

expected<nlohmann::json> daemon_client::next_message() {
  auto line = read_line();
  if (!line) return line.error();
  auto msg = nlohmann::json::parse(*line, nullptr, false);
  if (!msg.is_object()) return make_failure(failure_kind::internal, "the daemon sent something that is not JSON-RPC");
  return msg;
}

expected<nlohmann::json> daemon_client::await_reply(std::int64_t id, const output_fn& on_output,
                                                    const notification_fn& on_notification) {
  for (;;) {
    auto line = read_line();
    if (!line) return line.error();
    auto msg = nlohmann::json::parse(*line, nullptr, false);
    if (!msg.is_object()) return make_failure(failure_kind::internal, "the daemon sent something that is not JSON-RPC");
    if (msg.contains("method")) {
      if (on_notification) on_notification(msg);
      if (msg["method"] == "exec.output" && on_output && msg.contains("params")) {
        auto& p = msg["params"];
        on_output(p.value("stream", "stdout"), data_bytes(p));
      }
      continue;
    }
    auto reply_id = msg.find("id");
    // An error with id null is about the connection itself (refused, line too long).
    bool ours = reply_id != msg.end() && (*reply_id == id || reply_id->is_null());
    if (!ours) continue;
    if (auto err = msg.find("error"); err != msg.end() && err->is_object()) {
      int code = err->value("code", rpc::kInternalError);
      return make_failure(rpc::kind_for(code), err->value("message", std::string("error ") + std::to_string(code)));
    }
    if (auto result = msg.find("result"); result != msg.end()) return *result;
    return make_failure(failure_kind::internal, "the daemon's reply has neither result nor error");
  }
}

expected<nlohmann::json> daemon_client::call(const std::string& method, const nlohmann::json& params) {
  return call(method, params, nullptr);
}

expected<nlohmann::json> daemon_client::call(const std::string& method, const nlohmann::json& params,
                                             const notification_fn& on_notification) {
  auto id = next_id_++;
  std::string line;
  try {
    line = rpc::request_line(id, method, params);
  } catch (const nlohmann::json::exception&) {
    return make_failure(failure_kind::invalid_request, "arguments, code and environment must be valid UTF-8 to cross the daemon's protocol");
  }
  if (auto s = write_all(fd_, line); !s) return s.error();
  return await_reply(id, nullptr, on_notification);
}

expected<nlohmann::json> daemon_client::exec(const exec_request& request, output_fn on_output) {
  auto id = next_id_++;
  std::string line;
  try {
    line = rpc::request_line(id, "exec", exec_params_to_json(request, static_cast<bool>(on_output)));
  } catch (const nlohmann::json::exception&) {
    return make_failure(failure_kind::invalid_request, "arguments, code and environment must be valid UTF-8 to cross the daemon's protocol");
  }
  if (auto s = write_all(fd_, line); !s) return s.error();
  return await_reply(id, on_output);
}

nlohmann::json session_data_params(const std::string& session, const std::string& bytes) {
  nlohmann::json p{{"session", session}};
  if (is_valid_utf8(bytes)) p["data"] = bytes;
  else p["data_base64"] = base64_encode(bytes);
  return p;
}

std::string data_bytes(const nlohmann::json& params) {
  if (!params.is_object()) return {};
  if (auto b = params.find("data_base64"); b != params.end() && b->is_string())
    if (auto raw = base64_decode(b->get<std::string>())) return *raw;
  auto d = params.find("data");
  return d != params.end() && d->is_string() ? d->get<std::string>() : std::string();
}

} // namespace corral
