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
// `key` is the [sandbox.limits] key that raises the ceiling.
template <class T>
status apply(const char* name, const char* key, const std::optional<T>& asked, std::optional<T>& slot,
             widen_policy policy) {
  if (!asked) return ok();
  if (*asked > slot.value_or(*asked)) {
    if (policy == widen_policy::refuse)
      return make_failure(failure_kind::refused,
                          std::string("the request asks for ") + name + " " + show(*asked) +
                              " but the profile allows at most " + show(*slot) +
                              " (requests may only tighten the profile: raise " + key +
                              " under [sandbox.limits] in corral.toml, or set on_widen = \"clamp\" there to"
                              " cap such requests instead)");
    return ok();  // clamp: keep the profile's value
  }
  slot = *asked;
  return ok();
}

} // namespace

status check_limit_floors(const limit_request& asked) {
  if (asked.timeout && asked.timeout->count() <= 0)
    return make_failure(failure_kind::invalid_request, "the timeout must be positive");
  if (asked.memory_bytes && *asked.memory_bytes < kMemoryFloor)
    return make_failure(failure_kind::invalid_request, "the memory limit " + show(*asked.memory_bytes) +
                                                           " bytes is below the floor of 1 MiB (1048576 bytes)");
  if (asked.pids && *asked.pids < kPidsFloor)
    return make_failure(failure_kind::invalid_request, "the pids limit must be at least 1");
  if (asked.output_cap && *asked.output_cap == 0)
    return make_failure(failure_kind::invalid_request, "the output cap must be positive");
  if (asked.cpu_cores && (!std::isfinite(*asked.cpu_cores) || !(*asked.cpu_cores >= kCpuFloor)))
    return make_failure(failure_kind::invalid_request, "the cpu limit must be a finite number of cores, at least "
                                                       "the floor of 0.01");
  return ok();
}

expected<limits> tighten(const profile& prof, const limit_request& asked) {
  if (auto s = check_limit_floors(asked); !s) return s.error();

  limits out = prof.limit;
  auto policy = prof.on_widen;
  std::optional<std::chrono::milliseconds> timeout = out.timeout;
  std::optional<std::uint64_t> output_cap = out.output_cap;
  if (auto s = apply("timeout", "timeout", asked.timeout, timeout, policy); !s) return s.error();
  if (auto s = apply("output cap", "output_cap", asked.output_cap, output_cap, policy); !s) return s.error();
  if (auto s = apply("memory", "memory", asked.memory_bytes, out.memory_bytes, policy); !s) return s.error();
  if (auto s = apply("pids", "pids", asked.pids, out.pids, policy); !s) return s.error();
  if (auto s = apply("cpu cores", "cpu", asked.cpu_cores, out.cpu_cores, policy); !s) return s.error();
  out.timeout = *timeout;
  out.output_cap = *output_cap;
  return out;
}

} // namespace corral
