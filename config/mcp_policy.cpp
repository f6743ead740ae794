#include "config/mcp_policy.hpp"

#include <cctype>
#include <charconv>
#include <regex.h>

namespace corral {

std::string join_list(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // The classic two-pointer match: linear in practice, no recursion on long inputs.
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

bool any_match(const std::vector<std::string>& globs, std::string_view name) {
  for (const auto& g : globs)
    if (glob_match(g, name)) return true;
  return false;
}

std::string format_number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

} // namespace

std::string name_filter::refusal(std::string_view name, std::string_view what) const {
  for (const auto& g : deny)
    if (glob_match(g, name)) return std::string(what) + ".deny " + g;
  if (!allow.empty() && !any_match(allow, name)) return std::string(what) + ".allow [" + join_list(allow) + "] has no match";
  return {};
}

std::string argument_rule::describe() const {
  std::string s = tool + "." + arg;
  if (match) s += " matches " + *match;
  if (under) s += " is under " + *under;
  if (min && max) s += " in " + format_number(*min) + ".." + format_number(*max);
  else if (min) s += " >= " + format_number(*min);
  else if (max) s += " <= " + format_number(*max);
  return s;
}

bool mcp_policy::transparent() const {
  return tools.empty() && rules.empty() && rates.empty() && !budget && resources.empty() && prompts.empty() &&
         !default_deny && !pinned() && audit.empty();
}

namespace {

expected<double> number_from(const std::string& text, const std::string& what) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size())
    return make_failure(failure_kind::invalid_request, what + ": '" + text + "' is not a number");
  return v;
}

} // namespace

expected<argument_rule> parse_argument_rule(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return make_failure(failure_kind::invalid_request,
                        "--tool-rule '" + text + "': " + why +
                            " (write TOOL.ARG~REGEX, TOOL.ARG^DIR or TOOL.ARG=MIN..MAX)");
  };
  auto op = text.find_first_of("~^=");
  if (op == std::string::npos) return bad("no ~, ^ or =");
  auto lhs = text.substr(0, op);
  auto dot = lhs.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == lhs.size()) return bad("name the tool and the argument");
  argument_rule r;
  r.tool = lhs.substr(0, dot);
  r.arg = lhs.substr(dot + 1);
  auto rhs = text.substr(op + 1);
  if (rhs.empty()) return bad("nothing after the operator");
  if (text[op] == '~') r.match = rhs;
  else if (text[op] == '^') r.under = rhs;
  else {
    auto range = rhs.find("..");
    if (range == std::string::npos) return bad("a bound is MIN..MAX, MIN.. or ..MAX");
    auto lo = rhs.substr(0, range), hi = rhs.substr(range + 2);
    if (lo.empty() && hi.empty()) return bad("give at least one bound");
    if (!lo.empty()) {
      auto v = number_from(lo, "--tool-rule '" + text + "'");
      if (!v) return v.error();
      r.min = *v;
    }
    if (!hi.empty()) {
      auto v = number_from(hi, "--tool-rule '" + text + "'");
      if (!v) return v.error();
      r.max = *v;
    }
  }
  mcp_policy probe;
  probe.rules.push_back(r);
  if (auto s = check_mcp_policy(probe); !s) return s.error();
  return r;
}

expected<rate_rule> parse_rate_rule(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return make_failure(failure_kind::invalid_request,
                        "--tool-rate '" + text + "': " + why + " (write GLOB=N/s, GLOB=N/m or GLOB=N/h)");
  };
  auto eq = text.rfind('=');
  auto slash = text.rfind('/');
  if (eq == std::string::npos || eq == 0 || slash == std::string::npos || slash < eq) return bad("no GLOB=N/unit");
  rate_rule r;
  r.tool = text.substr(0, eq);
  auto count = text.substr(eq + 1, slash - eq - 1);
  auto unit = text.substr(slash + 1);
  unsigned long n = 0;
  auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
  if (ec != std::errc{} || end != count.data() + count.size() || n == 0 || n > 1'000'000)
    return bad("the count must be a whole number from 1 to 1000000");
  r.calls = static_cast<std::uint32_t>(n);
  if (unit == "s") r.per_seconds = 1;
  else if (unit == "m") r.per_seconds = 60;
  else if (unit == "h") r.per_seconds = 3600;
  else return bad("the unit is s, m or h");
  return r;
}

status check_mcp_policy(const mcp_policy& p) {
  auto bad = [](const std::string& why) { return make_failure(failure_kind::config_error, why); };
  for (std::size_t i = 0; i < p.rules.size(); ++i) {
    const auto& r = p.rules[i];
    auto where = "mcp tool rule " + r.tool + "." + r.arg;
    if (r.tool.empty() || r.arg.empty()) return bad("an mcp tool rule needs a tool and an arg");
    int kinds = (r.match ? 1 : 0) + (r.under ? 1 : 0) + ((r.min || r.max) ? 1 : 0);
    if (kinds != 1) return bad(where + ": give exactly one of match, under, or min/max");
    if (r.min && r.max && *r.min > *r.max) return bad(where + ": min is above max");
    if (r.under && (r.under->empty() || r.under->front() != '/'))
      return bad(where + ": under needs an absolute directory, not '" + *r.under + "'");
    if (r.match) {
      regex_t re;
      int rc = ::regcomp(&re, r.match->c_str(), REG_EXTENDED | REG_NOSUB);
      if (rc != 0) {
        char msg[256];
        ::regerror(rc, &re, msg, sizeof msg);
        return bad(where + ": the regex '" + *r.match + "' does not compile: " + msg);
      }
      ::regfree(&re);
    }
  }
  for (const auto& r : p.rates)
    if (r.tool.empty() || r.calls == 0 || r.per_seconds == 0)
      return bad("an mcp rate needs a tool glob, a positive number of calls and a positive window");
  if (p.budget && *p.budget == 0) return bad("mcp.tools.budget must be positive (deny the tools to allow no calls)");
  if (!p.pin.empty()) {
    bool ok = p.pin.size() == 7 + 64 && p.pin.rfind("sha256:", 0) == 0;
    for (std::size_t i = 7; ok && i < p.pin.size(); ++i)
      ok = std::isxdigit(static_cast<unsigned char>(p.pin[i])) && !std::isupper(static_cast<unsigned char>(p.pin[i]));
    if (!ok) return bad("mcp.pin must be sha256: and 64 lower-case hex digits (corral mcp --print-pin prints it), not '" +
                        p.pin + "'");
  }
  if (!p.audit.empty() && p.audit.front() != '/') return bad("mcp.audit must be an absolute path, not '" + p.audit + "'");
  if (p.audit_max_bytes < 4096) return bad("mcp.audit_max must be at least 4k");
  return ok_t{};
}

} // namespace corral
