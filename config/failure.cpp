#include "config/failure.hpp"

namespace corral {

const char* to_string(failure_kind kind) {
  switch (kind) {
    case failure_kind::invalid_request: return "invalid request";
    case failure_kind::refused: return "refused by policy";
    case failure_kind::tier_unavailable: return "tier unavailable";
    case failure_kind::limit_exceeded: return "limit exceeded";
    case failure_kind::config_error: return "configuration error";
    case failure_kind::spawn_failed: return "spawn failed";
    case failure_kind::not_found: return "not found";
    case failure_kind::conflict: return "state conflict";
    case failure_kind::internal: return "internal error";
  }
  return "internal error";
}

} // namespace corral
