#include "config/companion_program.hpp"

#include <climits>
#include <filesystem>
#include <unistd.h>

namespace corral {

// Defined only in a program built against the installed CMake package
// (cmake/corralConfig.cmake.in writes it): the libexec dir that package put the helpers in,
// wherever it was installed (`cmake --install --prefix` may differ from the configured one).
extern "C" const char* corral_packaged_libexec_dir() __attribute__((weak));

std::string find_companion_program(const std::string& name, const std::string& installed) {
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    auto dir = std::filesystem::path(self).parent_path();
    for (const auto& candidate : {dir / name, dir / "../libexec/corral" / name})
      if (::access(candidate.c_str(), X_OK) == 0) return std::filesystem::weakly_canonical(candidate);
  }
  if (corral_packaged_libexec_dir) {
    auto packaged = std::filesystem::path(corral_packaged_libexec_dir()) / name;
    if (::access(packaged.c_str(), X_OK) == 0) return packaged;
  }
  if (!installed.empty() && ::access(installed.c_str(), X_OK) == 0) return installed;
  return "";
}

} // namespace corral
