// Reading a parsed corral.toml with located failures: every accessor checks the key's type
// and, on a mismatch, records a config_error naming the dotted key and its
// file:line:column. The first failure is kept and later ones are dropped, so the operator
// fixes one thing at a time with an exact position. What the keys mean is the schema's
// (profile_schema.hpp); this only reads values.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "config/failure.hpp"

namespace corral {

// A key as TOML would write it, so the dotted path in a message can be pasted back.
std::string quote_key(std::string_view k);

// `path.key`, with `key` mapped home from toml++'s text and quoted where it must be.
std::string join_key(const std::string& path, std::string_view key);

// "a table", "an integer", ...: for "expected X, found Y".
const char* type_name(toml::node_type t);

// A string value and where it stands, for failures found after reading it.
struct located {
  std::string value;
  toml::source_region where;
};

class reader {
public:
  // `source` prefixes every position; relative paths resolve against `base_dir`.
  reader(std::string source, std::string base_dir) : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  const std::optional<failure>& error() const;
  const std::string& source() const;

  void fail(const toml::source_region& where, const std::string& key, const std::string& what);

  // Every key of `t` must be one of `known`.
  void only(const toml::table& t, const std::string& path, std::initializer_list<std::string_view> known);

  // The accessors: nullptr or nullopt when the key is absent or (after a failure) wrong.
  const toml::node* typed(const toml::table& t, const std::string& path, std::string_view key, toml::node_type want,
                          const char* expected_what = nullptr);
  const toml::table* table(const toml::table& t, const std::string& path, std::string_view key);
  std::optional<std::string> string(const toml::table& t, const std::string& path, std::string_view key);
  std::optional<std::string> nonempty(const toml::table& t, const std::string& path, std::string_view key);
  std::optional<std::string> choice(const toml::table& t, const std::string& path, std::string_view key,
                                    std::initializer_list<std::string_view> allowed);
  std::optional<std::vector<located>> located_strings(const toml::table& t, const std::string& path,
                                                      std::string_view key);
  std::optional<std::vector<std::string>> strings(const toml::table& t, const std::string& path, std::string_view key);
  std::optional<std::int64_t> integer(const toml::table& t, const std::string& path, std::string_view key);
  // An integer or a float; TOML writes 2 and 2.0 differently but a limit means the same.
  std::optional<double> number(const toml::table& t, const std::string& path, std::string_view key);
  // "512m" or a positive integer of bytes (config/sizes.hpp).
  std::optional<std::uint64_t> size(const toml::table& t, const std::string& path, std::string_view key);
  // Finite seconds, at most a year; positive (at least 1 ms) unless `zero_allowed`.
  std::optional<std::chrono::milliseconds> seconds(const toml::table& t, const std::string& path, std::string_view key,
                                                   bool zero_allowed);

  // Relative paths in the file mean relative to the file, not to wherever corral runs.
  std::string absolute(const std::string& p) const;

private:
  std::optional<std::string> checked(std::string_view s, const toml::source_region& where, const std::string& key);

  std::string source_;
  std::string base_dir_;
  std::optional<failure> first_;
};

} // namespace corral
