// libFuzzer: arbitrary bytes into the config loader. It must return a profile or a
// failure for every input; a crash, a sanitizer report or a hang is a bug.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>

#include "config/toml/toml_profile.hpp"

namespace {

std::string g_project;

void remove_project() {
  std::error_code ignored;
  std::filesystem::remove_all(g_project, ignored);
}

// A project dir with a src/ directory, so roots such as "src:/src" can load and the
// protected-path checks run on real paths.
const std::string& project_dir() {
  if (g_project.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "corral-fuzz-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) std::abort();
    g_project = tmpl;
    std::filesystem::create_directories(g_project + "/src");
    std::filesystem::create_directories(g_project + "/out");
    std::atexit(remove_project);
  }
  return g_project;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto p = corral::load_profile_from_string(text, "fuzz.toml", project_dir());
  // Touch the result so a half-built profile or failure would trip the sanitizers.
  if (p) {
    volatile std::size_t n = p->tier.size() + p->source_roots.size() + p->env.size();
    (void)n;
  } else {
    volatile std::size_t n = p.error().message.size();
    (void)n;
  }
  return 0;
}
