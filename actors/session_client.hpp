// A blocking handle on one stdio session, for C++ callers and tests: its own scoped actor is
// the session's owner, acks are sent as messages are received. Destroy it before the runtime.
//
//   auto s = corral::session_client::open(*rt, request);
//   (*s)->send(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
//   auto reply = (*s)->receive(std::chrono::seconds(5));
//   (*s)->close();
//   auto end = (*s)->wait_ended(std::chrono::seconds(5));
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/runtime.hpp"
#include "actors/sessions/session_messages.hpp"

namespace corral {

class session_client {
public:
  static expected<std::unique_ptr<session_client>> open(runtime& rt, session_request request) {
    std::unique_ptr<session_client> c(new session_client(rt.system()));
    if (request.initial_credit == 0) request.initial_credit = 1;
    c->ack_every_ = std::max<std::uint64_t>(1, request.initial_credit / 2);
    auto h = rt.open_session(request, caf::actor_cast<caf::actor>(c->self_));
    if (!h) return h.error();
    c->handle_ = *h;
    return c;
  }

  ~session_client() {
    if (!ended_ && handle_.actor) {
      self_->send(handle_.actor, cancel_atom::value);
      wait_ended(std::chrono::seconds(10));
    }
  }
  session_client(const session_client&) = delete;
  session_client& operator=(const session_client&) = delete;

  // Framed and written; blocks while the session's input window is full.
  status send(std::string message, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    status out = make_failure(failure_kind::internal, "no reply from the session");
    self_->request(handle_.actor, timeout, send_atom::value, std::move(message))
        .receive([&](session_reply& r) { out = r.ok ? ok() : status(r.error); },
                 [&](caf::error& e) { out = make_failure(failure_kind::internal, "send: " + self_->system().render(e)); });
    return out;
  }

  // The child's next message. Failures: limit_exceeded (a message the framing refused; the
  // next one may follow), refused ("the session ended": see ended()), internal (timeout).
  expected<std::string> receive(std::chrono::milliseconds timeout) {
    if (ended_) return make_failure(failure_kind::refused, "the session ended");
    expected<std::string> out = make_failure(failure_kind::internal, "no message within " + std::to_string(timeout.count()) + " ms");
    auto deadline = std::chrono::steady_clock::now() + timeout;
    bool settled = false;
    while (!settled) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      self_->receive(
          [&](session_message& m) {
            if (++unacked_ >= ack_every_) {
              self_->send(handle_.actor, ack_atom::value, unacked_);
              unacked_ = 0;
            }
            out = std::move(m.body);
            settled = true;
          },
          [&](session_refused& r) {
            out = r.error;
            settled = true;
          },
          [&](session_network& n) {
            // Allowlist mode: each proxied connection as it ends (the whole audit is also
            // in session_ended); kept, bounded, for network().
            if (network_.size() < kMaxNetworkEvents) network_.push_back(std::move(n.event));
          },
          [&](session_ended& e) {
            ended_ = std::move(e);
            out = make_failure(failure_kind::refused, "the session ended");
            settled = true;
          },
          caf::after(left) >> [] {});
    }
    return out;
  }

  // The connections the session's egress proxy reported so far (allowlist mode).
  const std::vector<network_event>& network() const { return network_; }

  void close() { self_->send(handle_.actor, close_atom::value); }
  // EOF on the child's stdin only: it runs on until it exits.
  void close_stdin() { self_->send(handle_.actor, stdin_eof_atom::value); }
  void cancel() { self_->send(handle_.actor, cancel_atom::value); }

  // Waits for the end, discarding messages still coming.
  expected<session_ended> wait_ended(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!ended_) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return make_failure(failure_kind::internal, "the session did not end in time");
      (void)receive(left);
    }
    return *ended_;
  }

  expected<session_info> info(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    expected<session_info> out = make_failure(failure_kind::internal, "no reply from the session");
    self_->request(handle_.actor, timeout, info_atom::value)
        .receive([&](session_info& i) { out = i; },
                 [&](caf::error& e) { out = make_failure(failure_kind::internal, "info: " + self_->system().render(e)); });
    return out;
  }

  const std::optional<session_ended>& ended() const { return ended_; }
  const session_handle& handle() const { return handle_; }

private:
  explicit session_client(caf::actor_system& sys) : self_(sys) {}

  caf::scoped_actor self_;
  session_handle handle_;
  std::uint64_t ack_every_ = 1;
  std::uint64_t unacked_ = 0;
  std::optional<session_ended> ended_;
  std::vector<network_event> network_;
};

} // namespace corral
