#include "proto/e2b/e2b_json.hpp"

#include <ctime>
#include <thread>

#include <unistd.h>

namespace corral {

using json = nlohmann::json;

namespace {

int connect_http_status(const std::string& code) {
  if (code == "invalid_argument" || code == "failed_precondition" || code == "out_of_range") return 400;
  if (code == "unauthenticated") return 401;
  if (code == "permission_denied") return 403;
  if (code == "not_found" || code == "unimplemented") return code == "not_found" ? 404 : 501;
  if (code == "already_exists" || code == "aborted") return 409;
  if (code == "resource_exhausted") return 429;
  if (code == "unavailable") return 503;
  if (code == "deadline_exceeded") return 504;
  return 500;
}

std::string permissions_string(const std::string& type, std::uint32_t mode) {
  std::string s(10, '-');
  s[0] = type == "dir" ? 'd' : type == "symlink" ? 'l' : '-';
  const char* rwx = "rwxrwxrwx";
  for (int i = 0; i < 9; ++i)
    if (mode & (1u << (8 - i))) s[1 + i] = rwx[i];
  return s;
}

} // namespace

std::string rfc3339_ms(std::int64_t unix_ms) {
  std::time_t secs = unix_ms / 1000;
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, int(unix_ms % 1000));
  return out;
}

http_response json_response(int status, const json& body) {
  http_response r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = body.dump();
  return r;
}

http_response control_error(int status, const std::string& message) {
  return json_response(status, {{"code", status}, {"message", message}});
}

http_response no_content() {
  http_response r;
  r.status = 204;
  return r;
}

int control_status(failure_kind kind) {
  switch (kind) {
    case failure_kind::invalid_request: return 400;
    case failure_kind::refused: return 403;
    case failure_kind::not_found: return 404;
    case failure_kind::conflict: return 409;
    case failure_kind::limit_exceeded: return 429;
    case failure_kind::tier_unavailable: return 503;
    default: return 500;
  }
}

const char* connect_code(failure_kind kind) {
  switch (kind) {
    case failure_kind::invalid_request: return "invalid_argument";
    case failure_kind::refused: return "permission_denied";
    case failure_kind::not_found: return "not_found";
    case failure_kind::conflict: return "failed_precondition";
    case failure_kind::limit_exceeded: return "resource_exhausted";
    case failure_kind::tier_unavailable: return "unavailable";
    default: return "internal";
  }
}

http_response connect_error(const std::string& code, const std::string& message) {
  return json_response(connect_http_status(code), {{"code", code}, {"message", message}});
}

std::string stream_end(const std::string& code, const std::string& message) {
  if (code.empty()) return "{}";
  return json{{"error", {{"code", code}, {"message", message}}}}.dump();
}

json sandbox_json(const sandbox_record& r, const workspace_info& w, bool with_token) {
  // Unbounded: the machine's, read once.
  static const std::uint64_t machine_mb = std::uint64_t(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE) >> 20;
  static const double machine_cpus = std::thread::hardware_concurrency();
  auto memory_mb = w.record.memory_bytes ? *w.record.memory_bytes >> 20 : machine_mb;
  auto cpus = w.record.cpu_cores ? std::max(1.0, *w.record.cpu_cores) : machine_cpus;
  json j = {{"sandboxID", r.id},
            {"templateID", r.template_id},
            {"alias", r.template_id},
            {"clientID", "corral"},
            {"envdVersion", kEnvdVersion},
            {"domain", nullptr},
            {"metadata", r.metadata},
            {"startedAt", rfc3339_ms(r.started_at_ms)},
            {"endAt", rfc3339_ms(r.end_at_ms)},
            {"state", w.phase == workspace_phase::paused ? "paused" : "running"},
            {"cpuCount", int(cpus)},
            {"memoryMB", memory_mb},
            {"diskSizeMB", 0}};
  if (with_token) j["envdAccessToken"] = r.access_token;
  return j;
}

std::string sandbox_path(const std::string& relative) {
  if (relative.empty() || relative == ".") return kSandboxHome;
  return std::string(kSandboxHome) + "/" + relative;
}

std::optional<std::string> workspace_relative(const std::string& path) {
  if (path.empty()) return std::string(".");
  if (path[0] != '/') return path;  // beneath the home; the files API refuses what escapes it
  for (std::string_view base : {std::string_view(kSandboxHome), std::string_view(kWorkspaceMountAt)}) {
    if (path == base) return std::string(".");
    if (path.size() > base.size() && path.compare(0, base.size(), base) == 0 && path[base.size()] == '/')
      return path.substr(base.size() + 1);
  }
  return std::nullopt;
}

json entry_json(const tree_entry& e) {
  const char* type = e.type == "file" ? "FILE_TYPE_FILE"
                     : e.type == "dir" ? "FILE_TYPE_DIRECTORY"
                     : e.type == "symlink" ? "FILE_TYPE_SYMLINK"
                                           : "FILE_TYPE_UNSPECIFIED";
  json j = {{"name", e.path == "." ? std::string("user") : e.name},
            {"type", type},
            {"path", sandbox_path(e.path)},
            {"size", std::to_string(e.size)},
            {"mode", e.mode | (e.type == "dir" ? 040000u : e.type == "symlink" ? 0120000u : 0100000u)},
            {"permissions", permissions_string(e.type, e.mode)},
            {"owner", "user"},
            {"group", "user"},
            {"modifiedTime", rfc3339_ms(e.mtime_ns / 1'000'000)}};
  if (e.type == "symlink") j["symlinkTarget"] = e.symlink_target;
  return j;
}

} // namespace corral
