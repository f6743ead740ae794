#include "actors/workspaces/workspace_snapshots.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "config/sha256.hpp"
#include "tiers/jail/landlock_tier.hpp"
#include "tiers/workspace/beneath_fd.hpp"
#include "tiers/workspace/snapshot_archive.hpp"

namespace corral {

namespace {

namespace fs = std::filesystem;

constexpr const char* kArchive = "archive.tar.zst";
constexpr const char* kPartial = ".partial";

failure os_failure(const std::string& what) {
  return make_failure(failure_kind::internal, what + ": " + std::strerror(errno));
}

failure no_snapshot(const std::string& id) { return make_failure(failure_kind::not_found, "no snapshot '" + id + "' here"); }

status make_private_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST) return os_failure("mkdir " + dir);
  return ok();
}

status sync_dir(const std::string& dir) {
  owned_fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid() || ::fsync(fd.get()) < 0) return os_failure("fsync " + dir);
  return ok();
}

expected<std::string> hash_file(int fd, const std::string& path) {
  auto hex = sha256_of_descriptor(fd);
  if (hex.empty())
    return errno != 0 ? os_failure("reading " + path) : make_failure(failure_kind::internal, "hashing " + path + " failed");
  return hex;
}

snapshot_reply snapshot_failed(failure f) { return snapshot_reply{false, std::move(f), {}}; }

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

} // namespace

snapshot_reply take_snapshot(const workspace_paths& at, snapshot_job job) {
  auto& r = job.record;
  auto tree = workspace_tree::open(at.root);
  if (!tree) return snapshot_failed(tree.error());
  auto manifest = scan_files(*tree, at);
  if (!manifest) return snapshot_failed(manifest.error());
  if (auto s = make_private_dir(job.snapshots_dir); !s) return snapshot_failed(s.error());
  auto partial = job.snapshots_dir + "/" + r.id + kPartial;
  auto final_dir = job.snapshots_dir + "/" + r.id;
  auto undo = [&](failure f) {
    std::error_code ec;
    fs::remove_all(partial, ec);
    return snapshot_failed(std::move(f));
  };
  if (::mkdir(partial.c_str(), 0700) < 0) return snapshot_failed(os_failure("mkdir " + partial));
  auto archive_path = partial + "/" + kArchive;
  owned_fd out(::open(archive_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!out.valid()) return undo(os_failure("create " + archive_path));
  auto summary = write_archive(*tree, *manifest, out.get());
  if (!summary) return undo(summary.error());
  if (::fsync(out.get()) < 0) return undo(os_failure("fsync " + archive_path));
  r.created_at = unix_now();
  r.digest = "sha256:" + summary->file.sha256;
  r.bytes = summary->file.bytes;
  r.entries = summary->entries;
  r.content_bytes = summary->content_bytes;
  r.skipped = std::move(summary->skipped);
  if (auto s = write_snapshot_record(partial, r); !s) return undo(s.error());
  if (::rename(partial.c_str(), final_dir.c_str()) < 0) return undo(os_failure("rename " + partial));
  if (auto s = sync_dir(job.snapshots_dir); !s) spdlog::warn("snapshot {}: {}", r.id, s.error().message);
  return snapshot_reply{true, {}, std::move(r)};
}

void sweep_partial_snapshots(const std::string& snapshots_dir) {
  std::error_code ec;
  for (auto& item : fs::directory_iterator(snapshots_dir, ec)) {
    auto name = item.path().filename().string();
    if (name.size() <= std::strlen(kPartial) || !name.ends_with(kPartial)) continue;
    if (!valid_snapshot_id(name.substr(0, name.size() - std::strlen(kPartial)))) continue;
    std::error_code rm;
    fs::remove_all(item.path(), rm);
    spdlog::info("removed the unfinished snapshot {} (the runtime stopped while taking it)", name);
  }
}

changes_reply restore_snapshot(const workspace_paths& at, const std::string& snapshots_dir, const std::string& id) {
  changes_reply reply;
  auto fail = [&](failure f) {
    reply.error = std::move(f);
    return reply;
  };
  auto dir = snapshots_dir + "/" + id;
  auto record = read_snapshot_record(dir);
  if (!record) return fail(record.error());
  auto archive_path = dir + "/" + kArchive;
  owned_fd in(::open(archive_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!in.valid()) return fail(os_failure("open " + archive_path));
  // The whole archive is checked before a byte of it is unpacked.
  auto digest = hash_file(in.get(), archive_path);
  if (!digest) return fail(digest.error());
  if ("sha256:" + *digest != record->digest)
    return fail(make_failure(failure_kind::internal, "snapshot " + id + " is damaged: its archive's digest is sha256:" +
                                                         *digest + ", its record says " + record->digest));
  if (::lseek(in.get(), 0, SEEK_SET) < 0) return fail(os_failure("lseek " + archive_path));
  auto tree = workspace_tree::open(at.root);
  if (!tree) return fail(tree.error());
  extract_bounds bounds;
  bounds.max_entries = kMaxTreeEntries;
  // A root runtime's jail runs as nobody: the files must be that user's, as the files API makes them.
  if (::geteuid() == 0) bounds.owner_uid = bounds.owner_gid = kLandlockJailUser;
  auto made = extract_archive(in.get(), tree->root_fd(), bounds);
  if (!made) return fail(made.error());
  return set_mark(at, "creation");
}

expected<snapshot_record> find_snapshot(const std::string& snapshots_dir, const std::string& id, const std::string& owner) {
  std::error_code ec;
  if (!valid_snapshot_id(id) || !fs::is_directory(snapshots_dir + "/" + id, ec)) return no_snapshot(id);
  auto record = read_snapshot_record(snapshots_dir + "/" + id);
  if (!record) return record.error();
  if (record->owner != owner || record->id != id) return no_snapshot(id);
  return record;
}

std::vector<snapshot_record> list_snapshots(const std::string& snapshots_dir, const std::string& owner) {
  std::vector<snapshot_record> out;
  std::error_code ec;
  for (auto& item : fs::directory_iterator(snapshots_dir, ec)) {
    auto name = item.path().filename().string();
    if (!valid_snapshot_id(name)) continue;
    auto record = read_snapshot_record(item.path());
    if (!record) {
      spdlog::warn("snapshot {}: {}", name, record.error().message);
      continue;
    }
    if (record->owner == owner) out.push_back(std::move(*record));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id); });
  return out;
}

status remove_snapshot(const std::string& snapshots_dir, const std::string& id) {
  if (!valid_snapshot_id(id)) return no_snapshot(id);
  std::error_code ec;
  fs::remove_all(snapshots_dir + "/" + id, ec);
  if (ec) return make_failure(failure_kind::internal, "removing snapshot " + id + ": " + ec.message());
  return ok();
}

} // namespace corral
