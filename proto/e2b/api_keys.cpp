#include "proto/e2b/api_keys.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "config/replace_file.hpp"
#include "config/sha256.hpp"

namespace corral {

namespace {

using json = nlohmann::json;

std::string keys_path(const std::string& dir) { return dir + "/keys.json"; }

status make_private_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST)
    return make_failure(failure_kind::config_error, "mkdir " + dir + ": " + std::strerror(errno));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) < 0 || !S_ISDIR(st.st_mode))
    return make_failure(failure_kind::config_error, dir + " is not a directory");
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0)
    return make_failure(failure_kind::config_error, dir + " must be owned by uid " + std::to_string(::geteuid()) +
                                                        " and closed to everyone else (mode 0700)");
  return ok();
}

status write_keys(const std::string& dir, const std::vector<api_key_record>& keys) {
  if (auto made = make_private_dir(dir); !made) return made;
  json list = json::array();
  for (auto& k : keys)
    list.push_back({{"id", k.id}, {"name", k.name}, {"sha256", k.sha256}, {"created_at", k.created_at}});
  json doc = {{"version", 1}, {"keys", list}};
  auto path = keys_path(dir);
  if (!replace_file(path, path + ".tmp-" + std::to_string(::getpid()), doc.dump(2) + "\n", true))
    return make_failure(failure_kind::internal, "writing " + path + ": " + std::strerror(errno));
  return ok();
}

bool valid_digest(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

} // namespace

std::string default_e2b_dir(const std::string& workspaces_dir) {
  if (const char* set = std::getenv("CORRAL_E2B_DIR"); set && set[0] == '/') return set;
  auto slash = workspaces_dir.find_last_of('/');
  auto parent = slash == std::string::npos || slash == 0 ? std::string("/") : workspaces_dir.substr(0, slash);
  return (parent == "/" ? "" : parent) + "/e2b";
}

expected<std::vector<api_key_record>> read_keys(const std::string& dir) {
  auto path = keys_path(dir);
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return std::vector<api_key_record>{};
    return make_failure(failure_kind::config_error, "reading " + path + ": " + std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  std::vector<api_key_record> out;
  try {
    auto doc = json::parse(text.str());
    if (doc.value("version", 0) != 1) return make_failure(failure_kind::config_error, path + ": not version 1");
    for (auto& k : doc.at("keys")) {
      api_key_record r{k.at("id").get<std::string>(), k.value("name", std::string()), k.at("sha256").get<std::string>(),
                       k.value("created_at", std::int64_t{0})};
      if (!valid_digest(r.sha256)) return make_failure(failure_kind::config_error, path + ": key " + r.id + " has no digest");
      out.push_back(std::move(r));
    }
  } catch (const std::exception& e) {
    return make_failure(failure_kind::config_error, path + " is not a key list: " + e.what());
  }
  return out;
}

std::string random_secret(std::string_view prefix) {
  unsigned char bytes[20];
  if (RAND_bytes(bytes, sizeof bytes) != 1) std::abort();  // no entropy: nothing safe to hand out
  std::string out(prefix);
  for (unsigned char b : bytes) {
    out += "0123456789abcdef"[b >> 4];
    out += "0123456789abcdef"[b & 15];
  }
  return out;
}

bool same_secret(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

expected<issued_key> add_key(const std::string& dir, const std::string& name) {
  auto keys = read_keys(dir);
  if (!keys) return keys.error();
  for (auto& k : *keys)
    if (!name.empty() && k.name == name)
      return make_failure(failure_kind::invalid_request, "a key named '" + name + "' exists already (" + k.id + ")");
  issued_key out;
  out.key = random_secret("e2b_");
  out.record.id = "k-" + random_secret("").substr(0, 12);
  out.record.name = name;
  out.record.sha256 = sha256_hex(out.key);
  out.record.created_at =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  keys->push_back(out.record);
  if (auto written = write_keys(dir, *keys); !written) return written.error();
  return out;
}

expected<api_key_record> remove_key(const std::string& dir, const std::string& id_or_name) {
  auto keys = read_keys(dir);
  if (!keys) return keys.error();
  for (auto it = keys->begin(); it != keys->end(); ++it)
    if (it->id == id_or_name || (!it->name.empty() && it->name == id_or_name)) {
      auto removed = *it;
      keys->erase(it);
      if (auto written = write_keys(dir, *keys); !written) return written.error();
      return removed;
    }
  return make_failure(failure_kind::not_found, "no E2B key " + id_or_name + " in " + keys_path(dir));
}

void key_book::refresh() {
  struct stat st {};
  if (::stat(keys_path(dir_).c_str(), &st) < 0) {
    keys_.clear();
    seen_mtime_ns_ = seen_size_ = -1;
    return;
  }
  std::int64_t mtime = std::int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  if (mtime == seen_mtime_ns_ && st.st_size == seen_size_) return;
  auto keys = read_keys(dir_);
  // An unreadable file admits nobody rather than the keys it held before.
  keys_ = keys ? std::move(*keys) : std::vector<api_key_record>{};
  seen_mtime_ns_ = mtime;
  seen_size_ = st.st_size;
}

std::optional<api_key_record> key_book::find(std::string_view key) {
  refresh();
  if (key.empty()) return std::nullopt;
  auto digest = sha256_hex(key);
  std::optional<api_key_record> found;
  for (auto& k : keys_)
    if (same_secret(k.sha256, digest)) found = k;
  return found;
}

} // namespace corral
