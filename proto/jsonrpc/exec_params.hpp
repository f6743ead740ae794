// The `exec` method's params, decoded into an exec_request. Strict: a wrong type or an
// unknown member is refused (a typo in a limit must not silently run without it).
#pragma once

#include "config/base64.hpp"

#include <nlohmann/json.hpp>

#include "actors/exec_request.hpp"
#include "config/failure.hpp"

namespace corral {

struct exec_params {
  exec_request request;
  bool stream = true;  // send exec.output notifications while it runs
};

// failure_kind::invalid_request names the member and what it must be.
expected<exec_params> exec_params_from_json(const nlohmann::json& params);

// The inverse, for clients (corral run --connect).
nlohmann::json exec_params_to_json(const exec_request& request, bool stream);


} // namespace corral
