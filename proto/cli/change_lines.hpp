// One change of a workspace's files as the CLI prints it: "A /work/new", "M /work/edit",
// "D /work/gone", a directory with a trailing '/' (`corral ws changes`, `run --changes`).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace corral::cli {

// `change` is one element of a result's "changes" (proto/jsonrpc/workspace_json.hpp).
std::string change_line(const nlohmann::json& change);

} // namespace corral::cli
