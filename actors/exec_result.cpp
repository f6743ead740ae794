#include "actors/exec_result.hpp"

namespace corral {

const char* to_string(verdict v) {
  switch (v) {
    case verdict::exited: return "exited";
    case verdict::signaled: return "signaled";
    case verdict::timed_out: return "timed_out";
    case verdict::out_of_memory: return "out_of_memory";
    case verdict::pids_limit: return "pids_limit";
    case verdict::output_truncated: return "output_truncated";
    case verdict::compile_failed: return "compile_failed";
    case verdict::cancelled: return "cancelled";
  }
  return "exited";
}

} // namespace corral
