#include "proto/cli/limit_flags.hpp"

#include <cmath>
#include <cstdlib>

#include "config/durations.hpp"
#include "config/sizes.hpp"
#include "config/tighten.hpp"

namespace corral::cli {

const char* const kLimitFlagsUsage =
    R"(  --memory SIZE     memory limit, e.g. 512m (docker --memory; floor 1m)
  --pids N          process limit (docker --pids-limit; floor 1)
  --cpu CORES       cpu limit in cores, e.g. 1.5 (docker --cpus; floor 0.01)
  --timeout D       e.g. 500ms, 30s, 5m or plain seconds
                    (each only tightens the profile's [sandbox.limits])
)";

expected<bool> parse_limit_flag(const std::vector<std::string>& args, std::size_t& i, limit_flags& out) {
  const auto& flag = args[i];
  if (flag != "--memory" && flag != "--pids" && flag != "--cpu" && flag != "--timeout") return false;
  if (i + 1 >= args.size()) return make_failure(failure_kind::invalid_request, flag + " needs a value");
  const auto& v = args[++i];
  auto bad = [&](const std::string& what) { return make_failure(failure_kind::invalid_request, flag + ": " + what); };
  limit_request asked;  // only to check the floors, as the profile's values are checked
  if (flag == "--memory") {
    auto bytes = parse_size(v);
    if (!bytes) return bad(bytes.error().message);
    asked.memory_bytes = out.memory_bytes = *bytes;
  } else if (flag == "--pids") {
    char* end = nullptr;
    errno = 0;
    auto n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || v[0] == '-' || *end != '\0' || errno == ERANGE)
      return bad("takes a whole number of processes, not '" + v + "'");
    asked.pids = out.pids = n;
  } else if (flag == "--cpu") {
    char* end = nullptr;
    double cores = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0') return bad("takes a number of cores such as 1.5, not '" + v + "'");
    asked.cpu_cores = out.cpu_cores = cores;
  } else {
    auto d = parse_duration(v);
    if (!d) return bad(d.error().message);
    asked.timeout = out.timeout = *d;
  }
  if (auto s = check_limit_floors(asked); !s) return bad(s.error().message);
  return true;
}

status limit_flags_need_in_process(const limit_flags& flags, const std::string& connect_socket) {
  if (connect_socket.empty() || !flags.any()) return ok();
  return make_failure(failure_kind::invalid_request,
                      "--memory, --pids, --cpu and --timeout apply to an in-process run; with --connect the "
                      "daemon's profile sets the limits");
}

} // namespace corral::cli
