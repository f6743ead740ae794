#include "tiers/workspace/workspace_path.hpp"

#include <cstdio>
#include <vector>

namespace corral {

namespace {

// A path as a message can show it: control and non-ASCII bytes as \xNN, long ones cut.
std::string shown(std::string_view path) {
  constexpr std::size_t shown_bytes = 200;
  std::string out = "'";
  for (std::size_t i = 0; i < path.size() && i < shown_bytes; ++i) {
    auto c = static_cast<unsigned char>(path[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\' || c == '\'') {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (path.size() > shown_bytes) out += "...";
  return out + "'";
}

// Components without the empty ones (repeated or trailing slashes) and without `.`.
std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    auto part = path.substr(start, end - start);
    if (!part.empty() && part != ".") parts.push_back(part);
    start = end + 1;
  }
  return parts;
}

bool has_dot_dot(const std::vector<std::string_view>& parts) {
  for (auto p : parts)
    if (p == "..") return true;
  return false;
}

} // namespace

expected<std::string> workspace_relative_path(std::string_view requested, std::string_view mount_at) {
  if (mount_at.empty() || mount_at.front() != '/' || mount_at.find('\0') != std::string_view::npos ||
      has_dot_dot(components(mount_at)))
    return make_failure(failure_kind::invalid_request,
                        "the workspace's mount_at " + shown(mount_at) + " is not a plain absolute path");
  if (requested.empty()) return make_failure(failure_kind::invalid_request, "the path is empty");
  if (requested.find('\0') != std::string_view::npos)
    return make_failure(failure_kind::invalid_request, "the path " + shown(requested) + " contains a NUL byte");
  if (requested.size() > max_workspace_path_bytes)
    return make_failure(failure_kind::invalid_request, "the path " + shown(requested) + " is " +
                                                           std::to_string(requested.size()) + " bytes long, more than the " +
                                                           std::to_string(max_workspace_path_bytes) + " allowed");
  auto parts = components(requested);
  if (has_dot_dot(parts))
    return make_failure(failure_kind::refused, "the path " + shown(requested) +
                                                   " contains '..', which the workspace files API never follows");
  std::size_t skip = 0;
  if (requested.front() == '/') {
    auto mount = components(mount_at);
    bool under = parts.size() >= mount.size();
    for (std::size_t i = 0; under && i < mount.size(); ++i) under = parts[i] == mount[i];
    if (!under)
      return make_failure(failure_kind::refused, "the path " + shown(requested) + " is outside the workspace at " +
                                                     shown(mount_at) + ": absolute paths must lie under it");
    skip = mount.size();
  }
  if (parts.size() - skip > max_workspace_path_components)
    return make_failure(failure_kind::invalid_request, "the path " + shown(requested) + " has " +
                                                           std::to_string(parts.size() - skip) + " components, more than the " +
                                                           std::to_string(max_workspace_path_components) + " allowed");
  if (parts.size() == skip) return std::string(".");
  std::string relative;
  for (std::size_t i = skip; i < parts.size(); ++i) {
    if (!relative.empty()) relative += '/';
    relative += parts[i];
  }
  return relative;
}

} // namespace corral
