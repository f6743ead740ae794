// What the E2B gateway keeps of a sandbox beyond its workspace (whose id is the sandbox's
// id): the key that owns it, its template, metadata and default environment, the envd
// access token its in-sandbox calls carry, and its E2B timeout. One file per sandbox
// (<e2b dir>/sandboxes/<id>.json, mode 0600: it holds the token), replaced whole, so a
// restarted daemon finds its sandboxes again with their workspaces.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/failure.hpp"

namespace corral {

struct sandbox_record {
  std::string id;   // the workspace's id
  std::string key;  // the owning key's id (api_key_record::id)
  std::string template_id = "base";
  std::map<std::string, std::string> metadata;
  std::map<std::string, std::string> env_vars;  // every process's environment, under its own
  std::string access_token;                     // X-Access-Token of its envd calls
  std::int64_t started_at_ms = 0;               // unix milliseconds
  std::int64_t end_at_ms = 0;                   // its timeout: the gateway ends it then
};

status write_sandbox_record(const std::string& e2b_dir, const sandbox_record& r);
void remove_sandbox_record(const std::string& e2b_dir, const std::string& id);
// Every record in the directory; unreadable ones are skipped and named in `problems`.
std::vector<sandbox_record> read_sandbox_records(const std::string& e2b_dir, std::vector<std::string>& problems);

} // namespace corral
