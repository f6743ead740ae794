// One line on stderr for each connection the egress proxy refused (allowlist mode). The
// program inside got its 403 or SOCKS reply; this line tells the person or agent running
// corral which destination was refused, by which rule, and which profile key would change it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "actors/exec_result.hpp"

namespace corral::cli {

// "corral: network: pypi.org:443 not_on_allowlist: …"; empty for an allowed connection.
std::string refused_connection_line(const network_event& e);

// The fields the line needs, from an audit record in JSON (proto/result_json.hpp): what a
// daemon sends in exec.network and session.network notifications.
network_event network_event_of(const nlohmann::json& event);

} // namespace corral::cli
