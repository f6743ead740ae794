#include "config/toml/toml_reader.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "config/sizes.hpp"
#include "config/toml/toml_text.hpp"

namespace corral {

namespace fs = std::filesystem;

namespace {

constexpr double kMaxSeconds = 365.0 * 24 * 3600;

bool bare_key(std::string_view k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

} // namespace

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

const std::optional<failure>& reader::error() const { return first_; }
const std::string& reader::source() const { return source_; }

void reader::fail(const toml::source_region& where, const std::string& key, const std::string& what) {
  if (first_) return;
  std::string at = source_;
  if (where.begin)
    at += ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column);
  first_ = make_failure(failure_kind::config_error, at + ": " + (key.empty() ? "" : key + ": ") + what);
}

void reader::only(const toml::table& t, const std::string& path, std::initializer_list<std::string_view> known) {
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

const toml::node* reader::typed(const toml::table& t, const std::string& path, std::string_view key,
                                toml::node_type want, const char* expected_what) {
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

const toml::table* reader::table(const toml::table& t, const std::string& path, std::string_view key) {
  auto n = typed(t, path, key, toml::node_type::table);
  return n ? n->as_table() : nullptr;
}

std::optional<std::string> reader::string(const toml::table& t, const std::string& path, std::string_view key) {
  auto n = typed(t, path, key, toml::node_type::string);
  if (!n) return std::nullopt;
  return checked(n->as_string()->get(), n->source(), join_key(path, key));
}

std::optional<std::string> reader::nonempty(const toml::table& t, const std::string& path, std::string_view key) {
  auto s = string(t, path, key);
  if (s && s->empty()) {
    fail(t.get(key)->source(), join_key(path, key), "must not be empty");
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> reader::choice(const toml::table& t, const std::string& path, std::string_view key,
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

std::optional<std::vector<located>> reader::located_strings(const toml::table& t, const std::string& path,
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

std::optional<std::vector<std::string>> reader::strings(const toml::table& t, const std::string& path,
                                                        std::string_view key) {
  auto items = located_strings(t, path, key);
  if (!items) return std::nullopt;
  std::vector<std::string> out;
  for (auto& i : *items) out.push_back(std::move(i.value));
  return out;
}

std::optional<std::int64_t> reader::integer(const toml::table& t, const std::string& path, std::string_view key) {
  auto n = typed(t, path, key, toml::node_type::integer);
  if (!n) return std::nullopt;
  return n->as_integer()->get();
}

std::optional<double> reader::number(const toml::table& t, const std::string& path, std::string_view key) {
  const toml::node* n = t.get(key);
  if (!n) return std::nullopt;
  if (auto i = n->as_integer()) return static_cast<double>(i->get());
  if (auto f = n->as_floating_point()) return f->get();
  fail(n->source(), join_key(path, key), std::string("expected a number, found ") + type_name(n->type()));
  return std::nullopt;
}

std::optional<std::uint64_t> reader::size(const toml::table& t, const std::string& path, std::string_view key) {
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

std::optional<std::chrono::milliseconds> reader::seconds(const toml::table& t, const std::string& path,
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

std::string reader::absolute(const std::string& p) const {
  fs::path path = p;
  if (path.is_relative()) path = fs::path(base_dir_) / path;
  return path.lexically_normal().string();
}

// TOML allows "\u0000"; no path, argv or variable can carry it to the kernel.
std::optional<std::string> reader::checked(std::string_view s, const toml::source_region& where,
                                           const std::string& key) {
  if (s.find('\0') != std::string_view::npos) {
    fail(where, key, "must not contain a NUL character");
    return std::nullopt;
  }
  return from_toml(s);
}

} // namespace corral
