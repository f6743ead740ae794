#include "config/tighten.hpp"

#include <cmath>
#include <sstream>

namespace corral {

namespace {

template <class T>
std::string show(const T& v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
std::string show(std::chrono::milliseconds v) { return show(v.count()) + " ms"; }

// Applies one asked value to one profile value. `ceiling` unset: the profile sets no limit,
// so any positive value tightens.
template <class T>
status apply(const char* name, const std::optional<T>& asked, std::optional<T>& slot,
             widen_policy policy) {
  if (!asked) return ok();
  if (*asked > slot.value_or(*asked)) {
    if (policy == widen_policy::refuse)
      return make_failure(failure_kind::refused,
                          std::string("the request asks for ") + name + " " + show(*asked) +
                              " but the profile allows at most " + show(*slot) +
                              " (requests may only tighten the profile; the operator can set"
                              " on_widen = \"clamp\")");
    return ok();  // clamp: keep the profile's value
  }
  slot = *asked;
  return ok();
}

} // namespace

expected<limits> tighten(const profile& prof, const limit_request& asked) {
  if (asked.timeout && asked.timeout->count() <= 0)
    return make_failure(failure_kind::invalid_request, "the timeout must be positive");
  if (asked.memory_bytes && *asked.memory_bytes == 0)
    return make_failure(failure_kind::invalid_request, "the memory limit must be positive");
  if (asked.pids && *asked.pids == 0)
    return make_failure(failure_kind::invalid_request, "the pids limit must be positive");
  if (asked.output_cap && *asked.output_cap == 0)
    return make_failure(failure_kind::invalid_request, "the output cap must be positive");
  if (asked.cpu_cores && (!std::isfinite(*asked.cpu_cores) || *asked.cpu_cores <= 0))
    return make_failure(failure_kind::invalid_request, "the cpu limit must be a positive finite number of cores");

  limits out = prof.limit;
  auto policy = prof.on_widen;
  std::optional<std::chrono::milliseconds> timeout = out.timeout;
  std::optional<std::uint64_t> output_cap = out.output_cap;
  if (auto s = apply("timeout", asked.timeout, timeout, policy); !s) return s.error();
  if (auto s = apply("output cap", asked.output_cap, output_cap, policy); !s) return s.error();
  if (auto s = apply("memory", asked.memory_bytes, out.memory_bytes, policy); !s) return s.error();
  if (auto s = apply("pids", asked.pids, out.pids, policy); !s) return s.error();
  if (auto s = apply("cpu cores", asked.cpu_cores, out.cpu_cores, policy); !s) return s.error();
  out.timeout = *timeout;
  out.output_cap = *output_cap;
  return out;
}

} // namespace corral
