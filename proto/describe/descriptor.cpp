#include "proto/describe/descriptor.hpp"

#include "config/version.hpp"

#include "config/sha256.hpp"
#include "proto/describe/machine_report.hpp"
#include "tiers/jail/system_view.hpp"

namespace corral {

namespace {

nlohmann::json optional_json(const auto& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json limits_json(const limits& l) {
  return {{"timeout_ms", l.timeout.count()},
          {"kill_grace_ms", l.kill_grace.count()},
          {"output_cap_bytes", l.output_cap},
          {"stdin_cap_bytes", l.stdin_cap},
          {"memory_bytes", optional_json(l.memory_bytes)},
          {"pids", optional_json(l.pids)},
          {"cpu_cores", optional_json(l.cpu_cores)},
          {"tmp_bytes", l.tmp_bytes},
          {"shm_bytes", l.shm_bytes},
          {"scratch_bytes", l.scratch_bytes}};
}

nlohmann::json roots_json(const profile& p) {
  auto out = nlohmann::json::array();
  for (const auto* list : {&p.source_roots, &p.output_roots})
    for (auto& g : *list)
      out.push_back({{"host", g.host_path}, {"virtual", g.virtual_path}, {"writable", g.writable}});
  return out;
}

nlohmann::json masks_json(const profile& p) {
  auto out = nlohmann::json::array();
  for (auto& m : p.masks)
    out.push_back({{"host", m.host_path},
                   {"virtual", m.virtual_path},
                   {"how", m.kind == mask_kind::hidden ? "hidden" : "read-only"},
                   {"what", m.what}});
  return out;
}

// Names only for what the operator set (values may be secrets); the defaults are ours.
nlohmann::json environment_json(const profile& p) {
  auto set = nlohmann::json::array();
  for (auto& [name, _] : p.env) set.push_back(name);
  nlohmann::json defaults = nlohmann::json::object();
  if (p.tier == "landlock")
    for (auto& [name, value] : jail_default_environment(""))
      if (!p.env.count(name)) defaults[name] = value;
  return {{"set", set}, {"defaults", defaults}};
}

// Only the selected tier's own table: settings of tiers not in use enforce nothing.
nlohmann::json tier_settings_json(const profile& p) {
  if (p.tier == "gvisor") return {{"runsc", p.gvisor.runsc}, {"platform", p.gvisor.platform}};
  if (p.tier == "container")
    return {{"engine", p.container.engine}, {"image", p.container.image}, {"runtime", p.container.runtime}};
  if (p.tier == "microvm")
    return {{"kernel", p.microvm.kernel}, {"rootfs", p.microvm.rootfs}, {"vmm", p.microvm.vmm}};
  return nlohmann::json::object();
}

nlohmann::json languages_json(const language_table& langs) {
  auto out = nlohmann::json::object();
  for (auto& name : langs.names()) {
    const language_spec* s = langs.entry(name);
    if (!s) continue;
    out[name] = {{"source_file", s->source_file},
                 {"compile", s->compile},
                 {"run", s->run},
                 {"env_allowlist", s->compile_env_allowlist}};
  }
  return out;
}

nlohmann::json selected_tier_json(const profile& p, const tier_registry& tiers) {
  nlohmann::json j{{"name", p.tier}};
  auto t = tiers.find(p.tier);
  if (!t) {
    j["available"] = false;
    j["reason"] = "this runtime has no tier named '" + p.tier + "'";
    j["enforces"] = nullptr;
    return j;
  }
  auto st = t->available();
  j["available"] = st.available;
  if (!st.available) j["reason"] = st.reason;
  j["enforces"] = tier_capabilities_json(t->capabilities());
  return j;
}

nlohmann::json mcp_policy_json(const mcp_policy& m) {
  nlohmann::json j;
  j["tools"] = {{"allow", m.tools.allow}, {"deny", m.tools.deny}};
  auto rules = nlohmann::json::array();
  for (auto& r : m.rules) rules.push_back(r.describe() + (r.optional ? " (optional)" : ""));
  j["tools"]["rules"] = rules;
  auto rates = nlohmann::json::array();
  for (auto& r : m.rates) rates.push_back(r.tool + "=" + std::to_string(r.calls) + "/" + std::to_string(r.per_seconds) + "s");
  j["tools"]["rate"] = rates;
  j["tools"]["budget"] = m.budget ? nlohmann::json(*m.budget) : nlohmann::json(nullptr);
  j["resources"] = {{"allow", m.resources.allow}, {"deny", m.resources.deny}};
  j["prompts"] = {{"allow", m.prompts.allow}, {"deny", m.prompts.deny}};
  j["default"] = m.default_deny ? "deny" : "allow";
  j["pin"] = m.pin.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.pin);
  j["pin_file"] = m.pin_file.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.pin_file);
  j["on_pin_change"] = m.on_pin_change == pin_action::hide ? "hide" : "refuse";
  j["audit"] = m.audit.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.audit);
  j["audit_args"] = m.audit_args;
  return j;
}

} // namespace

std::string descriptor_digest(const nlohmann::json& body) {
  // replace: a path that is not UTF-8 must not throw out of an audit record.
  auto text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto hex = sha256_hex(text);
  return hex.empty() ? "" : "sha256:" + hex;
}

nlohmann::json profile_descriptor(const profile& p, const kernel_features& features,
                                  const tier_registry& tiers) {
  nlohmann::json j;
  j["tier"] = p.tier;
  j["network"] = p.network == network_mode::host ? "host" : p.network == network_mode::allowlist ? "allowlist" : "none";
  // Only in allowlist mode, so the digests of the other profiles stay what they were.
  if (p.network == network_mode::allowlist) {
    auto texts = [](const std::vector<network_rule>& rules) {
      auto a = nlohmann::json::array();
      for (auto& r : rules) a.push_back(r.text);
      return a;
    };
    j["network_allow"] = texts(p.egress.allow);
    j["network_deny"] = texts(p.egress.deny);
  }
  // Only with a gateway policy, for the same reason.
  if (!p.mcp.transparent()) j["mcp"] = mcp_policy_json(p.mcp);
  j["on_widen"] = p.on_widen == widen_policy::clamp ? "clamp" : "refuse";
  j["limits"] = limits_json(p.limit);
  j["roots"] = roots_json(p);
  j["masks"] = masks_json(p);
  j["working_dir"] = p.working_dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.working_dir);
  j["protected_paths"] = p.protected_paths;
  j["landlock"] = {{"abi_floor", p.landlock.abi_floor},
                   {"deny_action", p.landlock.seccomp_kill ? "kill" : "errno"}};
  j["tier_settings"] = tier_settings_json(p);
  auto env_names = nlohmann::json::array();
  for (auto& [name, _] : p.env) env_names.push_back(name);
  j["env"] = env_names;
  j["environment"] = environment_json(p);
  j["languages"] = languages_json(p.languages);
  j["kernel"] = kernel_features_json(features);
  j["selected_tier"] = selected_tier_json(p, tiers);
  auto digest = descriptor_digest(j);
  j["digest"] = digest.empty() ? nlohmann::json(nullptr) : nlohmann::json(digest);
  j["config_path"] = p.config_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.config_path);
  // Outside the digest, as the config path is: the same profile keeps its digest across versions.
  j["corral_version"] = corral_version();
  return j;
}

} // namespace corral
