// CAF inspect() overloads for what crosses machines: an exec_request goes to a node, an
// exec_outcome comes back (proto/nodes/node_gateway.hpp). Registered with add_message_type in
// proto/node_types.hpp; locally the same overloads only serve CAF's to_string.
//
// Not serialized: exec_request::live_output. A subscriber is an actor of the caller's
// process; a node never streams to it, so it arrives empty on the far side.
#pragma once

#include <optional>
#include <utility>

#include <caf/error.hpp>
#include <caf/meta/load_callback.hpp>
#include <caf/meta/type_name.hpp>

#include "actors/exec_request.hpp"
#include "actors/exec_result.hpp"
#include "config/failure.hpp"

namespace corral {

// CAF 0.17 has no std::optional support: a presence flag and the value, written back
// by a load callback once both have been read.
template <class T>
struct optional_field {
  std::optional<T>& ref;
  bool present = false;
  T value{};
  explicit optional_field(std::optional<T>& r) : ref(r), present(r.has_value()), value(r.value_or(T{})) {}
};

template <class Inspector, class T>
typename Inspector::result_type inspect(Inspector& f, optional_field<T>& x) {
  auto store = [&x]() -> caf::error {
    if (x.present) x.ref = std::move(x.value);
    else x.ref.reset();
    return caf::none;
  };
  return f(x.present, x.value, caf::meta::load_callback(store));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, failure& x) {
  return f(caf::meta::type_name("failure"), x.kind, x.message);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, captured_stream& x) {
  return f(caf::meta::type_name("captured_stream"), x.data, x.truncated, x.dropped_bytes);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, resource_usage& x) {
  return f(caf::meta::type_name("resource_usage"), x.peak_memory_bytes, x.cpu_user_us, x.cpu_system_us);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, setup_step& x) {
  return f(caf::meta::type_name("setup_step"), x.name, x.micros);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, exec_result& x) {
  optional_field<int> exit_code{x.exit_code};
  optional_field<int> term_signal{x.term_signal};
  return f(caf::meta::type_name("exec_result"), x.execution_id, x.how, exit_code, term_signal, x.out, x.err,
           x.duration, x.timed_out, x.tier, x.workspace, x.isolation, x.not_enforced, x.masked, x.usage, x.steps);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, exec_request& x) {
  optional_field<std::string> stdin_data{x.stdin_data};
  optional_field<std::chrono::milliseconds> timeout{x.timeout};
  optional_field<std::uint64_t> memory{x.memory_limit_bytes};
  optional_field<std::uint64_t> output_cap{x.output_cap};
  optional_field<std::uint64_t> pids{x.pids_limit};
  optional_field<double> cpu{x.cpu_cores};
  return f(caf::meta::type_name("exec_request"), x.language, x.argv, x.code, stdin_data, timeout, memory,
           output_cap, pids, cpu, x.env, x.tier);
}

} // namespace corral
