#include "tiers/tier.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace corral {

std::string start_dir(const launch_request& request, const std::string& working_dir) {
  if (request.cwd.empty()) return working_dir;
  if (request.cwd.front() == '/') return request.cwd;
  return working_dir + "/" + request.cwd;
}

expected<std::string> resolve_program(const std::string& name, const std::string& search_path) {
  if (name.empty()) return make_failure(failure_kind::invalid_request, "the program name is empty");
  if (name.find('/') != std::string::npos) return name;
  std::size_t start = 0;
  while (start <= search_path.size()) {
    auto end = search_path.find(':', start);
    if (end == std::string::npos) end = search_path.size();
    // Relative entries (and the empty one, which means ".") would resolve against
    // whatever directory corral runs in: skip them.
    std::string candidate = search_path.substr(start, end - start);
    start = end + 1;
    if (candidate.empty() || candidate.front() != '/') continue;
    candidate.append("/").append(name);
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return make_failure(failure_kind::spawn_failed,
                      "program '" + name + "' was not found on the caller's PATH (" + search_path + ")");
}

std::vector<std::string> to_envp(const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

} // namespace corral
