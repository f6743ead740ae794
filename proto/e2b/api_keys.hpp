// The E2B API keys an operator issued (`corral e2b key add|ls|rm`): one JSON file, mode
// 0600, holding each key's id, name, creation time and SHA-256 — never the key itself,
// which is shown once, at `add`. Each key owns the sandboxes made with it: the gateway
// runs them as the principal "e2b:<key id>", so one key's sandboxes are another's
// nonexistent ones (the workspace registry answers only their owner).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/failure.hpp"

namespace corral {

struct api_key_record {
  std::string id;      // "k-" + 12 hex digits: what ls shows and rm takes
  std::string name;    // the operator's label; may be empty
  std::string sha256;  // of the whole key, lower-case hex
  std::int64_t created_at = 0;  // unix seconds
};

struct issued_key {
  api_key_record record;
  std::string key;  // "e2b_" + 40 hex digits, the shape the E2B SDKs expect
};

// <workspaces dir's parent>/e2b: beside the workspaces, outside the runtime's /run state
// (keys and sandbox records must outlive a reboot). $CORRAL_E2B_DIR overrides it.
std::string default_e2b_dir(const std::string& workspaces_dir);

expected<std::vector<api_key_record>> read_keys(const std::string& e2b_dir);
expected<issued_key> add_key(const std::string& e2b_dir, const std::string& name);
// The record removed, or not_found.
expected<api_key_record> remove_key(const std::string& e2b_dir, const std::string& id_or_name);

// The principal a key's sandboxes belong to.
inline std::string key_principal(const std::string& key_id) { return "e2b:" + key_id; }
inline std::string key_principal(const api_key_record& k) { return key_principal(k.id); }

// 40 hex digits of the system's random source after `prefix` (keys, access tokens).
std::string random_secret(std::string_view prefix);
// Equal without telling how much of it matched, by time.
bool same_secret(std::string_view a, std::string_view b);

// The keys as the gateway sees them: reread when the file changes (a key added or removed
// while the daemon runs counts from the next request), looked up by the key's digest.
class key_book {
public:
  explicit key_book(std::string e2b_dir) : dir_(std::move(e2b_dir)) {}
  std::optional<api_key_record> find(std::string_view key);
  const std::string& dir() const { return dir_; }

private:
  void refresh();
  std::string dir_;
  std::vector<api_key_record> keys_;
  std::int64_t seen_mtime_ns_ = -1;
  std::int64_t seen_size_ = -1;
};

} // namespace corral
