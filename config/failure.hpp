// Errors as values. Every fallible step in corral returns expected<T>: a value, or a
// failure that says what went wrong (with the path or syscall) and what to do about it.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace corral {

// Kinds map one to one onto the wire protocol's error codes, so a caller can branch on
// the kind and show the message to a person.
enum class failure_kind {
  invalid_request,   // the request itself is malformed (empty argv, NUL byte, bad limit)
  refused,           // policy forbids it (host tier in production mode, widening a limit)
  tier_unavailable,  // the chosen boundary cannot be built on this machine
  limit_exceeded,    // stdin or a message is larger than the profile allows
  config_error,      // corral.toml is malformed or inconsistent
  spawn_failed,      // the program could not be started
  not_found,         // a named thing (a workspace, a mark, a file in it) is not there for this caller
  conflict,          // the thing is in a state that forbids the call now (a workspace being snapshotted)
  internal,          // a bug or an OS failure corral did not expect
};

const char* to_string(failure_kind kind);

struct failure {
  failure_kind kind = failure_kind::internal;
  std::string message;

  // "invalid request: argv is empty"
  std::string describe() const { return std::string(to_string(kind)) + ": " + message; }
};

inline failure make_failure(failure_kind kind, std::string message) {
  return failure{kind, std::move(message)};
}

// A minimal std::expected stand-in (C++23 is not our language level).
template <class T>
class expected {
public:
  expected(T value) : state_(std::move(value)) {}
  expected(failure error) : state_(std::move(error)) {}

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const failure& error() const { return std::get<1>(state_); }

private:
  std::variant<T, failure> state_;
};

// expected<void>: success or a failure.
struct ok_t {};
using status = expected<ok_t>;
inline status ok() { return ok_t{}; }

} // namespace corral
