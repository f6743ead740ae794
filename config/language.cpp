#include "config/language.hpp"

namespace corral {

namespace {

// rustc shells out to the linker and a rustup shim needs RUSTUP_TOOLCHAIN/RUSTUP_HOME to
// resolve the toolchain the caller chose rather than rust-toolchain.toml (which, with the
// network denied, turns into a confusing "syncing channel updates" failure).
const std::vector<std::string> kRustToolchainEnv = {"PATH",        "HOME",       "TMPDIR",
                                                    "RUSTUP_HOME", "CARGO_HOME", "RUSTUP_TOOLCHAIN"};
// gcc finds as/ld through its own prefix but honours PATH and TMPDIR for its temporaries.
const std::vector<std::string> kCToolchainEnv = {"PATH", "TMPDIR"};

} // namespace

language_table language_table::builtin() {
  language_table t;
  t.define({"command", "", {}, {"/bin/sh", "-c", "{code}"}, {}, ""});
  // argv: the request's argv is the program; the table entry only names the language.
  t.define({"argv", "", {}, {}, {}, ""});
  t.define({"python", "main.py", {}, {"python3", "{src}"}, {}, ""});
  t.define({"javascript", "main.js", {}, {"node", "{src}"}, {}, ""});
  t.define({"typescript", "main.ts", {}, {}, {},
            "TypeScript needs a real TypeScript runner; corral does not run TypeScript as "
            "JavaScript. Configure one, e.g. [sandbox.languages.typescript] run = [\"tsx\", \"{src}\"]"});
  t.define({"rust", "main.rs", {"rustc", "--edition", "2021", "-o", "{bin}", "{src}"}, {"{bin}"},
            kRustToolchainEnv, ""});
  t.define({"c", "main.c", {"cc", "-O1", "-o", "{bin}", "{src}"}, {"{bin}"}, kCToolchainEnv, ""});
  t.define({"cpp", "main.cpp", {"c++", "-O1", "-o", "{bin}", "{src}"}, {"{bin}"}, kCToolchainEnv,
            ""});
  return t;
}

void language_table::define(language_spec spec) {
  auto name = spec.name;
  specs_[name] = std::move(spec);
}

expected<language_spec> language_table::find(const std::string& name) const {
  auto it = specs_.find(name);
  if (it == specs_.end()) {
    std::string known;
    for (auto& [n, _] : specs_) known += (known.empty() ? "" : ", ") + n;
    return make_failure(failure_kind::invalid_request,
                        "unknown language '" + name + "' (known: " + known + ")");
  }
  if (it->second.run.empty() && name != "argv")
    return make_failure(failure_kind::invalid_request,
                        "language '" + name + "' cannot run: " + it->second.unavailable_reason);
  return it->second;
}

const language_spec* language_table::entry(const std::string& name) const {
  auto it = specs_.find(name);
  return it == specs_.end() ? nullptr : &it->second;
}

std::vector<std::string> language_table::names() const {
  std::vector<std::string> out;
  for (auto& [n, _] : specs_) out.push_back(n);
  return out;
}

std::vector<std::string> expand_placeholders(const std::vector<std::string>& argv,
                                             const std::string& src, const std::string& bin,
                                             const std::string& code) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (const auto& arg : argv) {
    // Whole-argument placeholders only for {code}: the code is never spliced into a
    // larger string, so it cannot change the shape of the command line.
    if (arg == "{code}") {
      out.push_back(code);
      continue;
    }
    std::string s = arg;
    for (auto [key, value] : {std::pair{std::string("{src}"), src}, std::pair{std::string("{bin}"), bin}}) {
      for (auto pos = s.find(key); pos != std::string::npos; pos = s.find(key, pos + value.size()))
        s.replace(pos, key.size(), value);
    }
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace corral
