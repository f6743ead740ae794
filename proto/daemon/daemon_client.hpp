// A blocking client of the daemon (proto/PROTOCOL.md): one connection, one call at a time.
// `corral run --connect` uses it; output notifications reach a callback as they arrive.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "actors/exec_request.hpp"
#include "config/failure.hpp"

namespace corral {

class daemon_client {
public:
  static expected<daemon_client> connect(const std::string& socket_path);
  daemon_client(daemon_client&& other) noexcept;
  daemon_client& operator=(daemon_client&&) = delete;
  ~daemon_client();

  // The call's result, or its error as a failure (kind from the code, the daemon's message).
  expected<nlohmann::json> call(const std::string& method, const nlohmann::json& params);

  // Every notification that arrives while a call waits for its reply (session.output…).
  using notification_fn = std::function<void(const nlohmann::json& message)>;
  expected<nlohmann::json> call(const std::string& method, const nlohmann::json& params,
                                const notification_fn& on_notification);

  // Between calls: the next message (blocks until a whole line is there), whether one is
  // already buffered, and the socket to poll for more.
  expected<nlohmann::json> next_message();
  bool has_buffered_message() const { return buffer_.find('\n') != std::string::npos; }
  int fd() const { return fd_; }

  using output_fn = std::function<void(const std::string& stream, const std::string& bytes)>;
  // With `on_output`, output streams to it while the program runs; the result is the
  // JSON of an exec_result (proto/jsonrpc/result_json.hpp).
  expected<nlohmann::json> exec(const exec_request& request, output_fn on_output);

private:
  explicit daemon_client(int fd) : fd_(fd) {}
  expected<nlohmann::json> await_reply(std::int64_t id, const output_fn& on_output,
                                       const notification_fn& on_notification = nullptr);
  expected<std::string> read_line();

  int fd_ = -1;
  std::int64_t next_id_ = 1;
  std::string buffer_;
};

// Bytes as the protocol carries them (PROTOCOL.md): `data` when they are valid UTF-8, else
// `data_base64` too. The session.write params for `bytes`, and the exact bytes of a
// notification's params (session.output, exec.output).
nlohmann::json session_data_params(const std::string& session, const std::string& bytes);
std::string data_bytes(const nlohmann::json& params);

} // namespace corral
