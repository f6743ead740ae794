#include "tiers/workspace/hash_cache.hpp"

#include <charconv>
#include <fstream>
#include <sstream>
#include <string_view>
#include <time.h>
#include <unistd.h>

#include "config/replace_file.hpp"

namespace corral {

namespace {

constexpr std::string_view kHeader = "corral-hashcache 1\n";

std::int64_t ns_of(const struct timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

// File times come from the kernel's coarse clock: the same clock, read here.
std::int64_t coarse_now_ns() {
  struct timespec t {};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &t);
  return ns_of(t);
}

template <class T>
bool field(std::string_view& line, T& out) {
  auto space = line.find(' ');
  auto text = line.substr(0, space);
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  if (r.ec != std::errc{} || r.ptr != text.data() + text.size()) return false;
  line.remove_prefix(space == std::string_view::npos ? line.size() : space + 1);
  return true;
}

} // namespace

hash_cache::key hash_cache::key_of(const struct stat& st) {
  return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino), static_cast<std::uint64_t>(st.st_size),
          ns_of(st.st_ctim), ns_of(st.st_mtim)};
}

hash_cache::hash_cache(std::string path, std::chrono::nanoseconds racy_margin)
    : path_(std::move(path)), trust_before_ns_(coarse_now_ns() - racy_margin.count()) {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return;
  std::ostringstream text;
  text << in.rdbuf();
  std::string_view all = text.view();
  if (all.substr(0, kHeader.size()) != kHeader) return;
  all.remove_prefix(kHeader.size());
  while (!all.empty()) {
    auto nl = all.find('\n');
    if (nl == std::string_view::npos) break;  // a torn last line: ignored
    auto line = all.substr(0, nl);
    all.remove_prefix(nl + 1);
    key k{};
    if (!field(line, k.dev) || !field(line, k.ino) || !field(line, k.size) || !field(line, k.ctime_ns) ||
        !field(line, k.mtime_ns) || line.size() != 64)
      continue;
    loaded_.emplace(k, std::string(line));
  }
}

std::optional<std::string> hash_cache::lookup(const struct stat& st) {
  auto k = key_of(st);
  if (k.ctime_ns >= trust_before_ns_) return std::nullopt;
  auto it = loaded_.find(k);
  if (it == loaded_.end()) return std::nullopt;
  ++hits_;
  kept_.insert(*it);
  return it->second;
}

void hash_cache::store(const struct stat& st, const std::string& sha256) {
  ++stored_;
  auto k = key_of(st);
  if (k.ctime_ns >= trust_before_ns_ || sha256.size() != 64) return;
  kept_[k] = sha256;
  changed_ = true;
}

void hash_cache::save() const {
  // Unchanged: every entry kept was loaded and none was dropped.
  if (!changed_ && kept_.size() == loaded_.size()) return;
  std::string out(kHeader);
  for (auto& [k, digest] : kept_)
    out += std::to_string(k.dev) + ' ' + std::to_string(k.ino) + ' ' + std::to_string(k.size) + ' ' +
           std::to_string(k.ctime_ns) + ' ' + std::to_string(k.mtime_ns) + ' ' + digest + '\n';
  // Two scans may save at once: each its own temp, the last rename wins (both are true).
  replace_file(path_, path_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(::gettid()), out, false);
}

} // namespace corral
