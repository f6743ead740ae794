// Languages are data, not code: a table of how to turn source into a program to run, so an
// operator can add one in configuration. Placeholders in argv: {src} (the source file in the
// scratch dir), {bin} (the compiled program), {code} (the code itself, for `sh -c`).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/failure.hpp"

namespace corral {

struct language_spec {
  std::string name;
  std::string source_file;            // written into the scratch dir; empty: none
  std::vector<std::string> compile;   // empty: nothing to compile
  std::vector<std::string> run;       // empty: not runnable (see unavailable_reason)
  // Host variables the compile step may see (a toolchain needs its own paths).
  std::vector<std::string> compile_env_allowlist;
  std::string unavailable_reason;     // why `run` is empty, and how to fix it
};

class language_table {
public:
  // command, argv, python, javascript, typescript (no runner), rust, c, cpp.
  static language_table builtin();

  void define(language_spec spec);
  expected<language_spec> find(const std::string& name) const;
  // The entry as defined, runnable or not (find() refuses unrunnable ones); null if none.
  // The configuration loader overrides builtin entries field by field through this.
  const language_spec* entry(const std::string& name) const;
  std::vector<std::string> names() const;

private:
  std::map<std::string, language_spec> specs_;
};

// Replaces {src}, {bin} and {code} in each argument.
std::vector<std::string> expand_placeholders(const std::vector<std::string>& argv,
                                             const std::string& src, const std::string& bin,
                                             const std::string& code);

} // namespace corral
