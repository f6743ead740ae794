#include "proto/cli/mcp_policy_flags.hpp"

#include <charconv>
#include <filesystem>

#include "config/sizes.hpp"

namespace corral::cli {

const char* const kMcpPolicyUsage = R"(gateway (each narrows the profile's [mcp]; both apply):
  --tools-allow GLOBS   only these tools are listed and callable (comma-separated, * and ?)
  --tools-deny GLOBS    these tools are hidden and refused (deny wins)
  --tool-rule RULE      an argument check: TOOL.ARG~REGEX, TOOL.ARG^DIR (a path under DIR),
                        TOOL.ARG=MIN..MAX; TOOL may be a glob
  --tool-rate RATE      GLOB=N/s, N/m or N/h: calls of matching tools in any such window
  --tool-budget N       tools/call per session
  --resources-allow GLOBS, --resources-deny GLOBS   by URI
  --prompts-allow GLOBS, --prompts-deny GLOBS       by name
  --mcp-default allow|deny   methods the gateway does not know (default: allow)
  --pin sha256:HEX      refuse the server when its tool definitions differ from these
  --pin-file FILE       the expected definitions themselves (a diff, per-tool hiding)
  --on-pin-change refuse|hide   what a changed server gets (default: refuse)
  --audit FILE          one JSON line per decision, outside the boundary (--audit-args: with
                        the arguments, not only their digest; --audit-max SIZE, default 16m)
  --print-pin           list the server's tools, print their pin on stdout and exit
  --write-pin FILE      with --print-pin: also write the definitions to FILE for --pin-file
)";

namespace {

std::vector<std::string> split_globs(const std::string& v) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= v.size()) {
    auto comma = v.find(',', start);
    if (comma == std::string::npos) comma = v.size();
    if (comma > start) out.push_back(v.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::string absolute(const std::string& p) {
  std::error_code ec;
  auto a = std::filesystem::absolute(p, ec);
  return ec ? p : a.lexically_normal().string();
}

} // namespace

expected<bool> take_mcp_policy_flag(const std::vector<std::string>& args, std::size_t& i, mcp_policy_flags& f) {
  const auto& a = args[i];
  auto& p = f.policy;
  if (a == "--print-pin") return f.print_pin = true;
  if (a == "--audit-args") return p.audit_args = true;
  static const char* const kValued[] = {"--tools-allow", "--tools-deny", "--tool-rule", "--tool-rate", "--tool-budget",
                                        "--resources-allow", "--resources-deny", "--prompts-allow", "--prompts-deny",
                                        "--mcp-default", "--pin", "--pin-file", "--on-pin-change", "--audit",
                                        "--audit-max", "--write-pin"};
  bool known = false;
  for (const char* k : kValued) known = known || a == k;
  if (!known) return false;
  if (i + 1 >= args.size()) return make_failure(failure_kind::invalid_request, a + " needs a value");
  const auto& v = args[++i];
  auto bad = [&](const std::string& why) { return make_failure(failure_kind::invalid_request, a + ": " + why); };
  auto globs = [&](std::vector<std::string>& into) -> expected<bool> {
    auto g = split_globs(v);
    if (g.empty()) return bad("give at least one glob");
    into.insert(into.end(), g.begin(), g.end());
    return true;
  };
  if (a == "--tools-allow") return globs(p.tools.allow);
  if (a == "--tools-deny") return globs(p.tools.deny);
  if (a == "--resources-allow") return globs(p.resources.allow);
  if (a == "--resources-deny") return globs(p.resources.deny);
  if (a == "--prompts-allow") return globs(p.prompts.allow);
  if (a == "--prompts-deny") return globs(p.prompts.deny);
  if (a == "--tool-rule") {
    auto r = parse_argument_rule(v);
    if (!r) return r.error();
    p.rules.push_back(*r);
    return true;
  }
  if (a == "--tool-rate") {
    auto r = parse_rate_rule(v);
    if (!r) return r.error();
    p.rates.push_back(*r);
    return true;
  }
  if (a == "--tool-budget") {
    std::uint64_t n = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc{} || end != v.data() + v.size() || n == 0) return bad("a positive number of calls, not '" + v + "'");
    p.budget = n;
    return true;
  }
  if (a == "--mcp-default") {
    if (v != "allow" && v != "deny") return bad("allow or deny, not '" + v + "'");
    p.default_deny = v == "deny";
    return true;
  }
  if (a == "--on-pin-change") {
    if (v != "refuse" && v != "hide") return bad("refuse or hide, not '" + v + "'");
    p.on_pin_change = v == "hide" ? pin_action::hide : pin_action::refuse;
    return true;
  }
  if (a == "--audit-max") {
    auto n = parse_size(v);
    if (!n) return bad(n.error().message);
    p.audit_max_bytes = *n;
    return true;
  }
  if (a == "--pin") p.pin = v;
  else if (a == "--pin-file") p.pin_file = absolute(v);
  else if (a == "--audit") p.audit = absolute(v);
  else if (a == "--write-pin") f.write_pin = absolute(v);
  return true;
}

} // namespace corral::cli
