#include "config/toml/profile_schema.hpp"

#include <cctype>
#include <cmath>
#include <set>

#include "config/root_layout.hpp"
#include "config/toml/mcp_schema.hpp"
#include "config/toml/toml_text.hpp"
#include "config/utf8.hpp"

namespace corral {

namespace {

constexpr double kMaxCores = 8192;  // the kernel's NR_CPUS ceiling; also keeps cpu.max in range

// Kept here rather than taken from tiers/: configuration must not depend on the tiers.
// The mapping is the same as canonical_tier_name in tiers/tier_registry.cpp.
std::string canonical_tier(const std::string& name) {
  if (name == "tier0") return "host";
  if (name == "tier1") return "container";
  if (name == "tier2") return "gvisor";
  if (name == "tier3") return "microvm";
  return name;
}
const std::set<std::string> kTiers = {"landlock", "contained", "host", "gvisor", "container", "microvm", "e2b"};

std::string env_name_problem(std::string_view name) {
  if (name.empty()) return "an environment variable name must not be empty";
  if (name.find('=') != std::string_view::npos) return "an environment variable name must not contain '='";
  if (name.find('\0') != std::string_view::npos) return "an environment variable name must not contain NUL";
  return "";
}

std::optional<root_grant> parse_root(reader& r, const located& e, const std::string& key, bool output) {
  auto bad = [&](const std::string& why) {
    r.fail(e.where, key, "'" + e.value + "': " + why);
    return std::nullopt;
  };
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    auto colon = e.value.find(':', start);
    parts.push_back(e.value.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() < 2 || parts.size() > 3)
    return bad("expected host:virtual[:ro|:rw] (paths containing ':' are not supported)");
  if (parts.size() == 3) {
    // The suffix may only confirm the root's kind: a writable "source" would silently
    // turn a read-only ceiling into a writable one.
    if (parts[2] == "rw" && !output)
      return bad("a source root is read-only; list writable directories in sandbox.roots.output_roots");
    if (parts[2] == "ro" && output)
      return bad("an output root is writable; list read-only directories in sandbox.roots.source_roots");
    if (parts[2] != "ro" && parts[2] != "rw") return bad("the mode must be 'ro' or 'rw', not '" + parts[2] + "'");
  }
  if (parts[0].empty()) return bad("the host path is empty");
  auto g = resolve_root(r.absolute(parts[0]), parts[1], output);
  if (!g) return bad(g.error().message);
  if (!is_valid_utf8(g->host_path))  // every string must survive a JSON descriptor unchanged
    return bad("host path " + g->host_path + " is not valid UTF-8");
  return *g;
}

void read_roots(reader& r, const toml::table& t, profile& p) {
  const std::string path = "sandbox.roots";
  r.only(t, path, {"source_roots", "output_roots"});
  std::set<std::string> seen;
  for (bool output : {false, true}) {
    const char* key = output ? "output_roots" : "source_roots";
    auto items = r.located_strings(t, path, key);
    if (!items) continue;
    for (auto& item : *items) {
      auto g = parse_root(r, item, join_key(path, key), output);
      if (!g) return;
      if (!seen.insert(g->virtual_path).second) {
        r.fail(item.where, join_key(path, key), "'" + item.value + "': another root is already at " + g->virtual_path);
        return;
      }
      (output ? p.output_roots : p.source_roots).push_back(std::move(*g));
    }
  }
}

void read_limits(reader& r, const toml::table& t, limits& l) {
  const std::string path = "sandbox.limits";
  r.only(t, path, {"memory", "cpu", "pids", "timeout", "kill_grace", "output_cap", "stdin_cap", "tmp_size",
                   "shm_size", "scratch_size"});
  // A size below its floor is absurd (nothing could start), not a tight limit.
  auto floored = [&](const char* key, std::uint64_t floor) -> std::optional<std::uint64_t> {
    auto v = r.size(t, path, key);
    if (v && *v < floor) {
      r.fail(t.get(key)->source(), path + "." + key, "is below the floor of 1 MiB");
      return std::nullopt;
    }
    return v;
  };
  if (auto v = floored("memory", kMemoryFloor)) l.memory_bytes = *v;
  if (auto v = floored("tmp_size", kTmpfsFloor)) l.tmp_bytes = *v;
  if (auto v = floored("shm_size", kTmpfsFloor)) l.shm_bytes = *v;
  if (auto v = floored("scratch_size", kTmpfsFloor)) l.scratch_bytes = *v;
  if (auto v = r.size(t, path, "output_cap")) l.output_cap = *v;
  if (auto v = r.size(t, path, "stdin_cap")) l.stdin_cap = *v;
  if (auto v = r.number(t, path, "cpu")) {
    if (!std::isfinite(*v) || !(*v >= kCpuFloor))
      r.fail(t.get("cpu")->source(), path + ".cpu", "must be a finite number of cores, at least the floor of 0.01");
    else if (*v > kMaxCores) r.fail(t.get("cpu")->source(), path + ".cpu", "must be at most 8192 cores");
    else l.cpu_cores = *v;
  }
  if (auto v = r.integer(t, path, "pids")) {
    if (*v <= 0) r.fail(t.get("pids")->source(), path + ".pids", "must be a positive integer");
    else l.pids = static_cast<std::uint64_t>(*v);
  }
  if (auto v = r.seconds(t, path, "timeout", false)) l.timeout = *v;
  if (auto v = r.seconds(t, path, "kill_grace", true)) l.kill_grace = *v;
}

// A name on PATH stays a name; anything with a slash is a path relative to the file.
std::string program(const reader& r, const std::string& s) {
  return s.find('/') == std::string::npos ? s : r.absolute(s);
}

void read_tier_tables(reader& r, const toml::table& sb, profile& p) {
  if (auto t = r.table(sb, "sandbox", "landlock")) {
    const std::string path = "sandbox.landlock";
    r.only(*t, path, {"abi_floor", "deny_action"});
    if (auto v = r.integer(*t, path, "abi_floor")) {
      if (*v < 1 || *v > 255) r.fail(t->get("abi_floor")->source(), path + ".abi_floor", "must be an integer from 1 to 255");
      else p.landlock.abi_floor = static_cast<unsigned>(*v);
    }
    if (auto v = r.choice(*t, path, "deny_action", {"errno", "kill"})) p.landlock.seccomp_kill = *v == "kill";
  }
  if (auto t = r.table(sb, "sandbox", "gvisor")) {
    const std::string path = "sandbox.gvisor";
    r.only(*t, path, {"runsc", "platform"});
    if (auto v = r.nonempty(*t, path, "runsc")) p.gvisor.runsc = program(r, *v);
    if (auto v = r.string(*t, path, "platform")) p.gvisor.platform = *v;
  }
  if (auto t = r.table(sb, "sandbox", "container")) {
    const std::string path = "sandbox.container";
    r.only(*t, path, {"engine", "image", "runtime"});
    if (auto v = r.nonempty(*t, path, "engine")) {
      if (*v == "podman" || *v == "docker" || v->find('/') != std::string::npos) p.container.engine = program(r, *v);
      else r.fail(t->get("engine")->source(), path + ".engine", "'" + *v + "' is not \"podman\", \"docker\" or a path to either");
    }
    if (auto v = r.nonempty(*t, path, "image")) p.container.image = *v;
    if (auto v = r.nonempty(*t, path, "runtime")) p.container.runtime = *v;
  }
  if (auto t = r.table(sb, "sandbox", "microvm")) {
    const std::string path = "sandbox.microvm";
    r.only(*t, path, {"kernel", "rootfs", "vmm"});
    if (auto v = r.nonempty(*t, path, "kernel")) p.microvm.kernel = r.absolute(*v);
    if (auto v = r.nonempty(*t, path, "rootfs")) p.microvm.rootfs = r.absolute(*v);
    if (auto v = r.nonempty(*t, path, "vmm")) p.microvm.vmm = program(r, *v);
  }
  if (auto t = r.table(sb, "sandbox", "e2b")) r.only(*t, "sandbox.e2b", {});
}

bool template_name_ok(std::string_view name) {
  if (name.empty() || name.size() > 63 || !(std::islower(static_cast<unsigned char>(name[0])) || std::isdigit(static_cast<unsigned char>(name[0]))))
    return false;
  for (char c : name)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '.' ||
          c == '_' || c == '-'))
      return false;
  return true;
}

void read_template(reader& r, const toml::table& t, const std::string& path, workspace_template& out) {
  r.only(t, path, {"memory", "cpu", "pids", "env"});
  if (auto v = r.size(t, path, "memory")) {
    if (*v < kMemoryFloor) r.fail(t.get("memory")->source(), path + ".memory", "is below the floor of 1 MiB");
    else out.memory_bytes = *v;
  }
  if (auto v = r.number(t, path, "cpu")) {
    if (!std::isfinite(*v) || !(*v >= kCpuFloor) || *v > kMaxCores)
      r.fail(t.get("cpu")->source(), path + ".cpu", "must be a finite number of cores from 0.01 to 8192");
    else out.cpu_cores = *v;
  }
  if (auto v = r.integer(t, path, "pids")) {
    if (*v <= 0) r.fail(t.get("pids")->source(), path + ".pids", "must be a positive integer");
    else out.pids = static_cast<std::uint64_t>(*v);
  }
  if (auto env = r.table(t, path, "env")) {
    for (auto&& [k, v] : *env) {
      auto key = join_key(path + ".env", k.str());
      auto name = from_toml(k.str());
      if (auto problem = env_name_problem(name); !problem.empty()) r.fail(k.source(), key, problem);
      else if (auto value = r.string(*env, path + ".env", k.str())) out.env[name] = *value;
    }
  }
}

void read_workspaces(reader& r, const toml::table& t, workspace_settings& w) {
  const std::string path = "sandbox.workspaces";
  r.only(t, path, {"dir", "max_per_owner", "max_total", "idle_timeout", "max_lifetime", "templates"});
  if (auto templates = r.table(t, path, "templates")) {
    for (auto&& [k, v] : *templates) {
      auto name = from_toml(k.str());
      auto key = join_key(path + ".templates", k.str());
      if (!template_name_ok(name) || name == "base") {
        r.fail(k.source(), key,
               "a template's name is 1 to 63 of a-z 0-9 . _ -, starting with a letter or digit, and not \"base\" "
               "(the profile itself)");
        continue;
      }
      if (auto table = r.table(*templates, path + ".templates", k.str())) read_template(r, *table, key, w.templates[name]);
    }
  }
  if (auto v = r.nonempty(t, path, "dir")) w.dir = r.absolute(*v);
  auto count = [&](const char* key, std::size_t& out) {
    auto v = r.integer(t, path, key);
    if (!v) return;
    if (*v < 1 || *v > 4096) r.fail(t.get(key)->source(), path + "." + key, "must be an integer from 1 to 4096");
    else out = static_cast<std::size_t>(*v);
  };
  count("max_per_owner", w.max_per_owner);
  count("max_total", w.max_total);
  if (auto v = r.seconds(t, path, "idle_timeout", false)) w.idle_timeout = *v;
  if (auto v = r.seconds(t, path, "max_lifetime", false)) w.max_lifetime = *v;
}

bool language_name_ok(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '+')) return false;
  return true;
}

void read_language(reader& r, const std::string& name, const toml::table& t, const std::string& path,
                   language_table& langs) {
  r.only(t, path, {"source_file", "compile", "run", "env_allowlist"});
  const language_spec* builtin = langs.entry(name);
  language_spec spec = builtin ? *builtin : language_spec{};
  spec.name = name;
  if (auto v = r.string(t, path, "source_file")) {
    // Written into the scratch dir by name: a slash or ".." would write elsewhere.
    if (v->find('/') != std::string::npos || *v == "." || *v == "..")
      r.fail(t.get("source_file")->source(), path + ".source_file", "must be a plain file name (no '/')");
    else spec.source_file = *v;
  }
  auto argv = [&](const char* key) -> std::optional<std::vector<std::string>> {
    auto v = r.strings(t, path, key);
    if (v && !v->empty() && (*v)[0].empty()) {
      r.fail(t.get(key)->source(), path + "." + key, "the program (the first element) must not be empty");
      return std::nullopt;
    }
    return v;
  };
  if (auto v = argv("compile")) spec.compile = *v;
  if (auto v = argv("run")) {
    spec.run = *v;
    spec.unavailable_reason = v->empty() ? "disabled by the operator in " + r.source() : "";
    if (v->empty() && !builtin) r.fail(t.get("run")->source(), path + ".run", "a new language needs a run command");
  } else if (!builtin) {
    r.fail(t.source(), path, "a new language needs `run` (an array such as [\"python3\", \"{src}\"])");
  }
  if (auto items = r.located_strings(t, path, "env_allowlist")) {
    spec.compile_env_allowlist.clear();
    for (auto& i : *items) {
      if (auto problem = env_name_problem(i.value); !problem.empty()) r.fail(i.where, path + ".env_allowlist", problem);
      spec.compile_env_allowlist.push_back(i.value);
    }
  }
  langs.define(std::move(spec));
}

void read_languages(reader& r, const toml::table& t, language_table& langs) {
  const std::string path = "sandbox.languages";
  for (auto&& [k, v] : t) {
    std::string name = from_toml(k.str());
    auto key = join_key(path, name);
    if (!language_name_ok(name)) {
      r.fail(k.source(), key, "a language name uses only letters, digits, '_', '-' and '+'");
    } else if (name == "argv") {
      r.fail(k.source(), key, "argv runs the request's own argv; it is not a language and cannot be redefined");
    } else if (auto lt = v.as_table()) {
      read_language(r, name, *lt, key, langs);
    } else {
      r.fail(v.source(), key, std::string("expected a table, found ") + type_name(v.type()));
    }
  }
}

network_mode network_mode_named(const std::string& v) {
  return v == "host" ? network_mode::host : v == "allowlist" ? network_mode::allowlist : network_mode::none;
}

void read_rules(reader& r, const toml::table& t, const std::string& key, rule_list list,
                std::vector<network_rule>& out) {
  auto items = r.located_strings(t, "sandbox.network", key);
  if (!items) return;
  for (auto& i : *items) {
    auto rule = parse_network_rule(i.value, list);
    if (!rule) r.fail(i.where, "sandbox.network." + key, rule.error().message);
    else out.push_back(std::move(*rule));
  }
}

// `network = "none" | "host"` (the original key) or a [sandbox.network] table.
void read_network(reader& r, const toml::table& sb, profile& p) {
  const toml::node* n = sb.get("network");
  if (!n) return;
  if (!n->is_table()) {
    if (auto v = r.choice(sb, "sandbox", "network", {"none", "host"})) p.network = network_mode_named(*v);
    return;
  }
  const auto& t = *n->as_table();
  r.only(t, "sandbox.network", {"mode", "allow", "deny"});
  if (auto v = r.choice(t, "sandbox.network", "mode", {"none", "allowlist", "host"})) p.network = network_mode_named(*v);
  read_rules(r, t, "allow", rule_list::allow, p.egress.allow);
  read_rules(r, t, "deny", rule_list::deny, p.egress.deny);
  bool lists = !p.egress.allow.empty() || !p.egress.deny.empty();
  if (p.network != network_mode::allowlist && lists)
    r.fail(t.source(), "sandbox.network",
           "allow and deny apply only with mode = \"allowlist\" (the mode is \"" +
               std::string(p.network == network_mode::host ? "host" : "none") + "\")");
  else if (p.network == network_mode::allowlist && p.egress.allow.empty())
    r.fail(t.source(), "sandbox.network",
           "mode = \"allowlist\" needs a non-empty allow list (mode = \"none\" is the way to allow nothing)");
}

void read_sandbox(reader& r, const toml::table& sb, profile& p) {
  const std::string path = "sandbox";
  r.only(sb, path, {"tier", "network", "on_widen", "env", "protected_paths", "roots", "limits", "landlock",
                    "gvisor", "container", "microvm", "e2b", "languages", "workspaces"});
  if (auto v = r.string(sb, path, "tier")) {
    auto name = canonical_tier(*v);
    if (kTiers.count(name)) p.tier = name;
    else r.fail(sb.get("tier")->source(), "sandbox.tier",
                "unknown tier '" + *v + "' (known: landlock, contained, host, gvisor, container, microvm, e2b; "
                "aliases tier0=host, tier1=container, tier2=gvisor, tier3=microvm)");
  }
  read_network(r, sb, p);
  if (auto v = r.choice(sb, path, "on_widen", {"refuse", "clamp"}))
    p.on_widen = *v == "clamp" ? widen_policy::clamp : widen_policy::refuse;
  if (auto env = r.table(sb, path, "env")) {
    for (auto&& [k, v] : *env) {
      auto key = join_key("sandbox.env", k.str());
      auto name = from_toml(k.str());
      if (auto problem = env_name_problem(name); !problem.empty()) r.fail(k.source(), key, problem);
      else if (auto value = r.string(*env, "sandbox.env", k.str())) p.env[name] = *value;
    }
  }
  if (auto items = r.located_strings(sb, path, "protected_paths")) {
    for (auto& i : *items) {
      if (i.value.empty()) r.fail(i.where, "sandbox.protected_paths", "a protected path must not be empty");
      else p.protected_paths.push_back(r.absolute(i.value));
    }
  }
  if (auto t = r.table(sb, path, "roots")) read_roots(r, *t, p);
  if (auto t = r.table(sb, path, "limits")) read_limits(r, *t, p.limit);
  read_tier_tables(r, sb, p);
  if (auto t = r.table(sb, path, "languages")) read_languages(r, *t, p.languages);
  if (auto t = r.table(sb, path, "workspaces")) read_workspaces(r, *t, p.workspaces);
}

} // namespace

void read_profile_document(reader& r, const toml::table& doc, profile& p) {
  r.only(doc, "", {"sandbox", "mcp"});
  if (auto sb = r.table(doc, "", "sandbox")) read_sandbox(r, *sb, p);
  if (auto mcp = r.table(doc, "", "mcp")) read_mcp(r, *mcp, p.mcp);
}

} // namespace corral
