#include "config/toml/mcp_schema.hpp"

namespace corral {

namespace {

void read_filter(reader& r, const toml::table& t, const std::string& path, name_filter& f, bool more) {
  if (more) r.only(t, path, {"allow", "deny", "rules", "rate", "budget"});
  else r.only(t, path, {"allow", "deny"});
  if (auto v = r.strings(t, path, "allow")) f.allow = *v;
  if (auto v = r.strings(t, path, "deny")) f.deny = *v;
}

std::optional<bool> boolean(reader& r, const toml::table& t, const std::string& path, std::string_view key) {
  auto n = r.typed(t, path, key, toml::node_type::boolean);
  if (!n) return std::nullopt;
  return n->value<bool>();
}

void read_rules(reader& r, const toml::table& t, const std::string& path, mcp_policy& p) {
  auto n = r.typed(t, path, "rules", toml::node_type::array, "an array of tables");
  if (!n) return;
  std::size_t i = 0;
  for (auto& item : *n->as_array()) {
    auto where = path + ".rules[" + std::to_string(i++) + "]";
    auto* rule_table = item.as_table();
    if (!rule_table) {
      r.fail(item.source(), where, "expected a table such as { tool = \"read_file\", arg = \"path\", under = \"/project\" }");
      return;
    }
    r.only(*rule_table, where, {"tool", "arg", "match", "under", "min", "max", "optional"});
    argument_rule rule;
    if (auto v = r.nonempty(*rule_table, where, "tool")) rule.tool = *v;
    if (auto v = r.nonempty(*rule_table, where, "arg")) rule.arg = *v;
    rule.match = r.string(*rule_table, where, "match");
    rule.under = r.string(*rule_table, where, "under");
    rule.min = r.number(*rule_table, where, "min");
    rule.max = r.number(*rule_table, where, "max");
    if (auto v = boolean(r, *rule_table, where, "optional")) rule.optional = *v;
    mcp_policy probe;
    probe.rules.push_back(rule);
    if (auto s = check_mcp_policy(probe); !s) r.fail(rule_table->source(), where, s.error().message);
    else p.rules.push_back(std::move(rule));
  }
}

} // namespace

void read_mcp(reader& r, const toml::table& t, mcp_policy& p) {
  const std::string path = "mcp";
  r.only(t, path, {"default", "pin", "pin_file", "on_pin_change", "audit", "audit_args", "audit_max", "tools",
                   "resources", "prompts"});
  if (auto v = r.choice(t, path, "default", {"allow", "deny"})) p.default_deny = *v == "deny";
  if (auto v = r.nonempty(t, path, "pin")) p.pin = *v;
  if (auto v = r.nonempty(t, path, "pin_file")) p.pin_file = r.absolute(*v);
  if (auto v = r.choice(t, path, "on_pin_change", {"refuse", "hide"}))
    p.on_pin_change = *v == "hide" ? pin_action::hide : pin_action::refuse;
  if (auto v = r.nonempty(t, path, "audit")) p.audit = r.absolute(*v);
  if (auto v = boolean(r, t, path, "audit_args")) p.audit_args = *v;
  if (auto v = r.size(t, path, "audit_max")) p.audit_max_bytes = *v;
  if (auto tools = r.table(t, path, "tools")) {
    const std::string tp = "mcp.tools";
    read_filter(r, *tools, tp, p.tools, true);
    read_rules(r, *tools, tp, p);
    if (auto rates = r.located_strings(*tools, tp, "rate")) {
      for (auto& item : *rates) {
        auto rate = parse_rate_rule(item.value);
        if (!rate) r.fail(item.where, tp + ".rate", rate.error().message);
        else p.rates.push_back(*rate);
      }
    }
    if (auto v = r.integer(*tools, tp, "budget")) {
      if (*v <= 0) r.fail(tools->get("budget")->source(), tp + ".budget", "must be positive (deny the tools to allow no calls)");
      else p.budget = static_cast<std::uint64_t>(*v);
    }
  }
  if (auto res = r.table(t, path, "resources")) read_filter(r, *res, "mcp.resources", p.resources, false);
  if (auto pr = r.table(t, path, "prompts")) read_filter(r, *pr, "mcp.prompts", p.prompts, false);
  if (r.error()) return;
  if (auto s = check_mcp_policy(p); !s) r.fail(t.source(), path, s.error().message);
}

} // namespace corral
