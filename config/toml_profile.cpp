#include "config/toml_profile.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include <toml++/toml.h>

#include "config/protected_paths.hpp"
#include "config/root_layout.hpp"
#include "config/sizes.hpp"
#include "config/utf8.hpp"

namespace corral {

namespace fs = std::filesystem;

namespace {

// A config file is a few kilobytes; anything this large is a mistake, not a profile.
constexpr std::size_t kMaxConfigBytes = 1 << 20;
constexpr double kMaxSeconds = 365.0 * 24 * 3600;
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
const std::set<std::string> kTiers = {"landlock", "host", "gvisor", "container", "microvm", "e2b"};

// toml++ 3.3.0 (Debian 12) reaches __builtin_unreachable when it asks whether a character
// in these ranges is whitespace (marzer/tomlplusplus#190, fixed upstream after 3.3.0), and
// it asks wherever a parse path checks for whitespace: undefined behaviour on operator
// input. So the text toml++ sees carries them as private-use characters (which it handles)
// and every string and key read back is mapped home. Columns still count characters.
struct shifted_range {
  char32_t first, last;
  char32_t to;
};
constexpr shifted_range kShifted[] = {
    {0xa1, 0x499, 0xe000}, {0x2c5e, 0x3057, 0xe000 + 0x3f9}, {0xfb26, 0xfefe, 0xe000 + 0x3f9 + 0x3fa}};
constexpr char32_t kShiftedEnd = 0xe000 + 0x3f9 + 0x3fa + 0x3d9;  // one past the last stand-in

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

// Rewrites code points with `map`; malformed bytes pass through for toml++ to report.
template <class Map>
std::string remap(std::string_view s, Map map) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    std::size_t n = utf8_sequence_at(s, i, &cp);
    if (n == 0) {
      out += s[i++];
      continue;
    }
    append_utf8(out, map(cp));
    i += n;
  }
  return out;
}

char32_t shift_for_toml(char32_t cp) {
  for (auto& r : kShifted)
    if (cp >= r.first && cp <= r.last) return r.to + (cp - r.first);
  return cp;
}

char32_t shift_home(char32_t cp) {
  for (auto& r : kShifted)
    if (cp >= r.to && cp <= r.to + (r.last - r.first)) return r.first + (cp - r.to);
  return cp;
}

// The stand-ins all encode with a leading 0xee byte: most strings need no work.
std::string from_toml(std::string_view s) {
  return s.find('\xee') == std::string_view::npos ? std::string(s) : remap(s, shift_home);
}


bool bare_key(std::string_view k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

// A key as TOML would write it, so the dotted path in a message can be pasted back.
std::string quote_key(std::string_view k) {
  if (bare_key(k)) return std::string(k);
  std::string out = "\"";
  for (char c : k) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string join_key(const std::string& path, std::string_view key) {
  auto k = from_toml(key);
  return path.empty() ? quote_key(k) : path + "." + quote_key(k);
}

const char* type_name(toml::node_type t) {
  switch (t) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

std::string env_name_problem(std::string_view name) {
  if (name.empty()) return "an environment variable name must not be empty";
  if (name.find('=') != std::string_view::npos) return "an environment variable name must not contain '='";
  if (name.find('\0') != std::string_view::npos) return "an environment variable name must not contain NUL";
  return "";
}

struct located {
  std::string value;
  toml::source_region where;
};

// Walks the document; the first failure is kept and returned, later ones are dropped so
// the operator fixes one thing at a time with an exact position.
class reader {
public:
  reader(std::string source, std::string base_dir)
      : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  const std::optional<failure>& error() const { return first_; }
  const std::string& source() const { return source_; }

  void fail(const toml::source_region& where, const std::string& key, const std::string& what) {
    if (first_) return;
    std::string at = source_;
    if (where.begin)
      at += ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column);
    first_ = make_failure(failure_kind::config_error, at + ": " + (key.empty() ? "" : key + ": ") + what);
  }

  // Every key of `t` must be one of `known`.
  void only(const toml::table& t, const std::string& path, std::initializer_list<std::string_view> known) {
    for (auto&& [k, v] : t) {
      bool found = false;
      for (auto name : known) found = found || k.str() == name;
      if (found) continue;
      std::string list;
      for (auto name : known) list += (list.empty() ? "" : ", ") + std::string(name);
      std::string where = path.empty() ? "at the top level" : "in [" + path + "]";
      fail(k.source(), "", "unknown key '" + join_key(path, k.str()) + "' " +
                               (known.size() == 0 ? where + ", which takes no keys yet"
                                                  : "(known " + where + ": " + list + ")"));
    }
  }

  const toml::node* typed(const toml::table& t, const std::string& path, std::string_view key,
                          toml::node_type want, const char* expected_what = nullptr) {
    const toml::node* n = t.get(key);
    if (!n) return nullptr;
    if (n->type() != want) {
      fail(n->source(), join_key(path, key),
           std::string("expected ") + (expected_what ? expected_what : type_name(want)) + ", found " +
               type_name(n->type()));
      return nullptr;
    }
    return n;
  }

  const toml::table* table(const toml::table& t, const std::string& path, std::string_view key) {
    auto n = typed(t, path, key, toml::node_type::table);
    return n ? n->as_table() : nullptr;
  }

  std::optional<std::string> string(const toml::table& t, const std::string& path, std::string_view key) {
    auto n = typed(t, path, key, toml::node_type::string);
    if (!n) return std::nullopt;
    return checked(n->as_string()->get(), n->source(), join_key(path, key));
  }

  std::optional<std::string> nonempty(const toml::table& t, const std::string& path, std::string_view key) {
    auto s = string(t, path, key);
    if (s && s->empty()) {
      fail(t.get(key)->source(), join_key(path, key), "must not be empty");
      return std::nullopt;
    }
    return s;
  }

  std::optional<std::string> choice(const toml::table& t, const std::string& path, std::string_view key,
                                    std::initializer_list<std::string_view> allowed) {
    auto s = string(t, path, key);
    if (!s) return s;
    std::string list;
    for (auto a : allowed) {
      if (*s == a) return s;
      list += (list.empty() ? "" : ", ") + std::string("\"") + std::string(a) + "\"";
    }
    fail(t.get(key)->source(), join_key(path, key), "'" + *s + "' is not one of " + list);
    return std::nullopt;
  }

  std::optional<std::vector<located>> located_strings(const toml::table& t, const std::string& path,
                                                      std::string_view key) {
    auto n = typed(t, path, key, toml::node_type::array, "an array of strings");
    if (!n) return std::nullopt;
    std::vector<located> out;
    for (auto& e : *n->as_array()) {
      if (!e.is_string()) {
        fail(e.source(), join_key(path, key), std::string("expected strings, found ") + type_name(e.type()));
        return std::nullopt;
      }
      auto s = checked(e.as_string()->get(), e.source(), join_key(path, key));
      if (!s) return std::nullopt;
      out.push_back({*s, e.source()});
    }
    return out;
  }

  std::optional<std::vector<std::string>> strings(const toml::table& t, const std::string& path,
                                                  std::string_view key) {
    auto items = located_strings(t, path, key);
    if (!items) return std::nullopt;
    std::vector<std::string> out;
    for (auto& i : *items) out.push_back(std::move(i.value));
    return out;
  }

  std::optional<std::int64_t> integer(const toml::table& t, const std::string& path, std::string_view key) {
    auto n = typed(t, path, key, toml::node_type::integer);
    if (!n) return std::nullopt;
    return n->as_integer()->get();
  }

  // An integer or a float; TOML writes 2 and 2.0 differently but a limit means the same.
  std::optional<double> number(const toml::table& t, const std::string& path, std::string_view key) {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (auto i = n->as_integer()) return static_cast<double>(i->get());
    if (auto f = n->as_floating_point()) return f->get();
    fail(n->source(), join_key(path, key), std::string("expected a number, found ") + type_name(n->type()));
    return std::nullopt;
  }

  std::optional<std::uint64_t> size(const toml::table& t, const std::string& path, std::string_view key) {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (auto i = n->as_integer()) {
      if (i->get() > 0) return static_cast<std::uint64_t>(i->get());
      fail(n->source(), join_key(path, key), std::to_string(i->get()) + " is not a positive number of bytes");
      return std::nullopt;
    }
    if (auto s = n->as_string()) {
      auto parsed = parse_size(s->get());
      if (parsed) return *parsed;
      fail(n->source(), join_key(path, key), parsed.error().message);
      return std::nullopt;
    }
    fail(n->source(), join_key(path, key),
         std::string("expected a size such as \"512m\" or a positive integer of bytes, found ") +
             type_name(n->type()));
    return std::nullopt;
  }

  std::optional<std::chrono::milliseconds> seconds(const toml::table& t, const std::string& path,
                                                   std::string_view key, bool zero_allowed) {
    auto v = number(t, path, key);
    if (!v) return std::nullopt;
    auto where = t.get(key)->source();
    auto name = join_key(path, key);
    // !(v > 0) rather than v <= 0: it also catches NaN.
    if (!std::isfinite(*v) || (zero_allowed ? !(*v >= 0) : !(*v > 0))) {
      fail(where, name, std::string("must be a ") + (zero_allowed ? "non-negative" : "positive") +
                            ", finite number of seconds");
      return std::nullopt;
    }
    if (*v > kMaxSeconds) {
      fail(where, name, "must be at most a year (31536000 seconds)");
      return std::nullopt;
    }
    auto ms = std::chrono::milliseconds(std::llround(*v * 1000));
    if (!zero_allowed && ms.count() < 1) {
      fail(where, name, "must be at least a millisecond (0.001)");
      return std::nullopt;
    }
    return ms;
  }

  // Relative paths in the file mean relative to the file, not to wherever corral runs.
  std::string absolute(const std::string& p) const {
    fs::path path = p;
    if (path.is_relative()) path = fs::path(base_dir_) / path;
    return path.lexically_normal().string();
  }

private:
  // TOML allows "\u0000"; no path, argv or variable can carry it to the kernel.
  std::optional<std::string> checked(std::string_view s, const toml::source_region& where, const std::string& key) {
    if (s.find('\0') != std::string_view::npos) {
      fail(where, key, "must not contain a NUL character");
      return std::nullopt;
    }
    return from_toml(s);
  }

  std::string source_;
  std::string base_dir_;
  std::optional<failure> first_;
};

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
                    "gvisor", "container", "microvm", "e2b", "languages"});
  if (auto v = r.string(sb, path, "tier")) {
    auto name = canonical_tier(*v);
    if (kTiers.count(name)) p.tier = name;
    else r.fail(sb.get("tier")->source(), "sandbox.tier",
                "unknown tier '" + *v + "' (known: landlock, host, gvisor, container, microvm, e2b; "
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
}

// Columns count characters, as toml++ does, not bytes.
std::string line_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

expected<profile> load_text(std::string_view text, const std::string& source, const std::string& base_dir,
                            const std::string& config_path, const std::string& project_dir) {
  // toml++ reports a NUL too, but as a confusing parse error inside whatever it was reading.
  if (auto nul = text.find('\0'); nul != std::string_view::npos)
    return make_failure(failure_kind::config_error,
                        source + ":" + line_column(text, nul) +
                            ": the file contains a NUL byte; a config file must be UTF-8 text");
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    std::size_t n = utf8_sequence_at(text, i, &cp);
    // The stand-ins must be unambiguous; a private-use character has no place in a profile.
    if (n && cp >= 0xe000 && cp < kShiftedEnd)
      return make_failure(failure_kind::config_error,
                          source + ":" + line_column(text, i) +
                              ": private-use character in the file; a config file holds no such characters");
    i += n ? n : 1;
  }
  toml::table doc;
  try {
    doc = toml::parse(remap(text, shift_for_toml), std::string(source));
  } catch (const toml::parse_error& e) {
    std::string what = from_toml(e.description());
    auto pos = e.source().begin;
    std::string at = source + (pos ? ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column) : "");
    if (what.find("utf-8") != std::string::npos || what.find("UTF-8") != std::string::npos)
      what += " (a config file must be UTF-8 text)";
    return make_failure(failure_kind::config_error, at + ": " + what);
  }
  profile p;
  p.config_path = config_path;
  reader r(source, base_dir);
  r.only(doc, "", {"sandbox"});
  if (auto sb = r.table(doc, "", "sandbox")) read_sandbox(r, *sb, p);
  if (r.error()) return *r.error();
  if (auto s = check_root_layout(p); !s) return make_failure(failure_kind::config_error, source + ": " + s.error().message);
  if (auto s = mask_protected(p, {(fs::path(project_dir) / ".git").string()}); !s)
    return make_failure(failure_kind::config_error, source + ": " + s.error().message);
  return p;
}

} // namespace

expected<profile> load_profile_from_string(std::string_view text, std::string_view source_name,
                                           const std::string& project_dir) {
  return load_text(text, std::string(source_name), project_dir, "", project_dir);
}

expected<profile> load_profile(const std::string& config_path, const std::string& project_dir) {
  const bool explicit_path = !config_path.empty();
  const std::string path = explicit_path ? config_path : (fs::path(project_dir) / "corral.toml").string();
  auto fail = [&](const std::string& why) {
    return make_failure(failure_kind::config_error, "config file " + path + ": " + why);
  };
  struct stat link_st {};
  if (::lstat(path.c_str(), &link_st) != 0) {
    if (errno == ENOENT && !explicit_path) return profile{};  // no corral.toml: the defaults
    return fail(std::string(std::strerror(errno)) +
                (explicit_path ? " (--config must name an existing file)" : ""));
  }
  // O_NONBLOCK: a FIFO planted as corral.toml must not hang start-up before fstat refuses it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    if (S_ISLNK(link_st.st_mode) && err == ENOENT) {
      std::error_code ec;
      auto target = fs::read_symlink(path, ec);
      return fail("is a symlink to " + (ec ? std::string("a missing file") : target.string()) +
                  ", which does not exist");
    }
    return fail(std::strerror(err));
  }
  std::string text;
  struct stat st {};
  bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && static_cast<std::size_t>(st.st_size) <= kMaxConfigBytes) {
    char buf[16384];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      if (text.size() > kMaxConfigBytes) break;
    }
  }
  ::close(fd);
  if (!regular) return fail("is not a regular file");
  if (text.size() > kMaxConfigBytes || static_cast<std::size_t>(st.st_size) > kMaxConfigBytes)
    return fail("is larger than 1 MiB; that is not a profile");
  std::error_code ec;
  auto canonical = fs::canonical(path, ec);
  if (ec) return fail(ec.message());
  return load_text(text, path, canonical.parent_path().string(), canonical.string(), project_dir);
}

} // namespace corral
