// The MCP gateway's policy: which tools, resources and prompts an MCP client may see and
// use through `corral mcp` (or any stdio session of a profile that has one), what their
// arguments may be, how often they may be called, which tool definitions are pinned, and
// where each decision is recorded. Read from the profile's [mcp] table and from the CLI's
// --tools-allow/--tools-deny/... flags; a request (library, daemon) adds a layer that can
// only narrow it (every layer must pass). Pure data and matching; the per-session state
// (rates, pins, requests in flight) is actors/mcp/mcp_gate.hpp's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/failure.hpp"

namespace corral {

// "a, b, c": names and rules in messages.
std::string join_list(const std::vector<std::string>& items);

// Shell-style: '*' any run of characters (slashes included), '?' one character; no classes.
bool glob_match(std::string_view pattern, std::string_view text);

// allow (empty: everything) minus deny; deny wins.
struct name_filter {
  std::vector<std::string> allow;
  std::vector<std::string> deny;

  bool empty() const { return allow.empty() && deny.empty(); }
  // Empty when `name` passes; otherwise the rule that hid it, as the operator wrote it
  // ("deny write_file", "not in allow [read_*, ...]").
  std::string refusal(std::string_view name, std::string_view what) const;
};

// A check on one argument of matching tools' calls. The argument is a top-level key of
// `arguments`, or a dotted path into nested objects; an array is checked element by element.
struct argument_rule {
  std::string tool;  // a glob
  std::string arg;
  std::optional<std::string> match;  // POSIX extended regex, unanchored unless written so
  std::optional<std::string> under;  // a path lexically inside this directory (no ".." out)
  std::optional<double> min;
  std::optional<double> max;
  bool optional = false;  // absent passes (default: an absent argument is refused)

  std::string describe() const;
};

// At most `calls` calls of matching tools in any `per` window (sliding).
struct rate_rule {
  std::string tool;  // a glob
  std::uint32_t calls = 0;
  std::uint32_t per_seconds = 60;
};

// What a server whose tool definitions differ from the pin gets.
enum class pin_action : std::uint8_t { refuse, hide };

struct mcp_policy {
  name_filter tools;
  std::vector<argument_rule> rules;
  std::vector<rate_rule> rates;
  std::optional<std::uint64_t> budget;  // tools/call per session
  name_filter resources;                // by URI
  name_filter prompts;                  // by name
  bool default_deny = false;            // methods the gateway does not know are refused
  // "sha256:<64 hex>": the digest of the canonical tool definitions (actors/mcp/tool_pin.hpp).
  std::string pin;
  std::string pin_file;  // the expected definitions themselves, for a diff and per-tool hiding
  pin_action on_pin_change = pin_action::refuse;
  std::string audit;  // a JSONL file, outside the boundary
  bool audit_args = false;  // the arguments themselves, not only their digest
  std::uint64_t audit_max_bytes = 16 * 1024 * 1024;  // then rotated once to audit + ".1"

  // True when nothing is checked: the transparent relay is enough.
  bool transparent() const;
  bool pinned() const { return !pin.empty() || !pin_file.empty(); }
};

// One --tool-rule from the command line: TOOL.ARG~REGEX, TOOL.ARG^DIR (under), or
// TOOL.ARG=MIN..MAX (either bound may be left out).
expected<argument_rule> parse_argument_rule(const std::string& text);
// One --tool-rate: GLOB=N/s, N/m or N/h.
expected<rate_rule> parse_rate_rule(const std::string& text);
// Checks what the readers cannot: a regex compiles, a pin has the right form, bounds are
// ordered. `where` prefixes the message ("mcp.tools.rules[2]").
status check_mcp_policy(const mcp_policy& p);

} // namespace corral
