// session.open's params, decoded into a stdio session's or a terminal's request. Strict, as
// exec's are (exec_params.hpp): a wrong type or an unknown member is refused. The members
// both kinds take (argv, env, tier, lifetime, the limits, network_allow) are read once;
// each kind adds its own.
#pragma once

#include <nlohmann/json.hpp>

#include "actors/sessions/session_messages.hpp"
#include "config/failure.hpp"

namespace corral {

// "kind": "stdio": needs a non-empty argv; also framing, forward_stderr, idle_timeout.
expected<session_request> stdio_params_from_json(const nlohmann::json& params);

// "kind": "terminal": also rows, cols (1 to 65535) and echo.
expected<terminal_request> terminal_params_from_json(const nlohmann::json& params);

} // namespace corral
