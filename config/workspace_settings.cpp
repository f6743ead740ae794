#include "config/workspace_settings.hpp"

#include <cstdlib>
#include <unistd.h>

namespace corral {

std::string workspaces_dir(const workspace_settings& settings) {
  if (!settings.dir.empty()) return settings.dir;
  // Without a profile naming one: tests and one-off runs keep theirs off the machine's.
  if (const char* env = std::getenv("CORRAL_WORKSPACES_DIR"); env && *env == '/') return env;
  if (::geteuid() == 0) return "/var/lib/corral/workspaces";
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg == '/') return std::string(xdg) + "/corral/workspaces";
  if (const char* home = std::getenv("HOME"); home && *home == '/')
    return std::string(home) + "/.local/state/corral/workspaces";
  return "/tmp/corral-workspaces-" + std::to_string(::geteuid());
}

} // namespace corral
