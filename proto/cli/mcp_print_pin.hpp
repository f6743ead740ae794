// `corral mcp --print-pin -- SERVER`: corral is, for once, the MCP client itself. It starts
// the server inside the boundary, initializes it, lists every page of its tools and prints
// their pin (actors/mcp/tool_pin.hpp) on stdout, to paste into [mcp] pin; with --write-pin
// FILE it also writes the definitions, for pin_file. The profile's own gateway policy is
// left out for this listing: a pin is of what the server offers, not of what a policy shows.
#pragma once

#include <string>

#include "actors/runtime.hpp"

namespace corral::cli {

int print_mcp_pin(runtime& rt, const session_request& request, const std::string& write_to);

} // namespace corral::cli
